import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { Matcher } from '../src/matcher.ts'
import { compilePattern } from '../src/search.ts'
import { boot, codeOf, text, useFolders, write } from './harness.ts'

const folders = useFolders()

/** Writes files relative to the workspace, making their folders. */
function tree(files: Record<string, string | Buffer>) {
  for (const [name, content] of Object.entries(files)) {
    const path = join(folders().workspace, name)
    mkdirSync(dirname(path), { recursive: true })
    write(path, content)
  }
}

describe('glob', () => {
  it('lists matching files relative to the root, sorted', async () => {
    tree({ 'src/b.ts': '', 'src/a.ts': '', 'src/deep/c.ts': '', 'src/d.js': '', 'README.md': '' })
    const { call } = await boot(folders())
    const result = await call('glob', { pattern: '**/*.ts' })
    expect(text(result)).toBe('src/a.ts\nsrc/b.ts\nsrc/deep/c.ts')
    expect(result).toMatchObject({ value: { total: 3, truncated: false, path: '.' } })
    expect(text(await call('glob', { pattern: '*.{ts,js}', path: 'src' }))).toBe('src/a.ts\nsrc/b.ts\nsrc/d.js')
  })

  it.each([
    ['glob', { pattern: '*a*a*a*a*a*c' }],
    ['glob, the stars in braces', { pattern: '*{a,b}*{a,b}*{a,b}*c' }],
    ['grep\'s glob', { pattern: 'x', glob: 'src/*a*a*a*a*a*c' }],
  ])('refuses a pattern with more than three * in one part, whose matching could hold the process for minutes: %s', async (tool, args) => {
    tree({ [`src/${'a'.repeat(101)}.txt`]: 'x' })
    const { call } = await boot(folders())
    const result = await call(tool.startsWith('grep') ? 'grep' : 'glob', args)
    expect(result).toMatchObject({ isError: true, error: { code: 'INVALID_PATTERN', message: expect.stringContaining('at most three') } })
  })

  it.each([
    ['glob', { pattern: '@(+(n)|+(n))+X' }],
    ['grep\'s glob', { pattern: 'x', glob: '@(+(n)|+(n))+X' }],
  ])('matches parentheses as themselves: an extended glob, whose nested repeats could hold the process for minutes with no star, means nothing special: %s', async (tool, args) => {
    tree({ ['n'.repeat(18)]: 'x', 'photo (1).jpg': 'x', 'photo 1.jpg': 'x' })
    const { call } = await boot(folders())
    const result = await call(tool.startsWith('grep') ? 'grep' : 'glob', args)
    expect(result.isError).toBe(false)
    expect(text(await call('glob', { pattern: '*(1).jpg' }))).toBe('photo (1).jpg')
  })

  it('quotes a name holding a line break or another control character in glob and grep listings: one name is one line, and no name forges a note', async () => {
    const forged = 'x.ts\n[Showing the first 1 matching line]'
    tree({ 'notes\nsecret.ts': 'hit', [forged]: 'hit', 'plain.ts': 'hit' })
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '*' })).split('\n')).toEqual(['"notes\\nsecret.ts"', 'plain.ts', JSON.stringify(forged)])
    const grep = text(await call('grep', { pattern: 'hit' }))
    expect(grep).toContain('"notes\\nsecret.ts"\n1: hit')
    expect(grep).not.toContain('\n[Showing')
    // JSON.stringify leaves these as they are: they are written as \u escapes, still JSON.
    for (const [name, quoted] of [['nel\u0085x.ts', '"sub/nel\\u0085x.ts"'], ['ls\u2028x.ts', '"sub/ls\\u2028x.ts"'], ['csi\u009bx.ts', '"sub/csi\\u009bx.ts"']] as const) {
      tree({ [`sub/${name}`]: 'hit' })
      expect(text(await call('glob', { pattern: '*', path: 'sub' })).split('\n')).toContain(quoted)
      expect(JSON.parse(quoted)).toBe(`sub/${name}`)
      rmSync(join(folders().workspace, 'sub', name))
    }
  })

  it('reads no .gitignore that is a FIFO: the walk neither hangs nor takes a thread', async () => {
    tree({ 'a.txt': '', 'sub/b.txt': '' })
    expect(spawnSync('mkfifo', [join(folders().workspace, 'sub', '.gitignore')]).status).toBe(0)
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '**/*.txt' }))).toBe('a.txt\nsub/b.txt')
  })

  it('reads no .gitignore through a link: rules from outside the workspace do not hide its files', async () => {
    tree({ 'a.txt': '' })
    const outside = join(folders().workspace, '..', `rules-${process.pid}`)
    write(outside, '*.txt\n')
    symlinkSync(outside, join(folders().workspace, '.gitignore'))
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '*.txt' }))).toBe('a.txt')
  })

  it('keeps patterns with up to three * in one part: *test*.*', async () => {
    tree({ 'src/a.test.ts': '', 'src/b.ts': '' })
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '**/*test*.*' }))).toBe('src/a.test.ts')
  })

  it('counts the stars of one brace alternative, not of all: {*.ts,*.tsx,*.js,*.jsx} is fine', async () => {
    tree({ 'src/a.ts': '', 'src/b.tsx': '', 'src/c.test.ts': '', 'src/d.md': '' })
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: 'src/{*.ts,*.tsx,*.js,*.jsx}' }))).toBe('src/a.ts\nsrc/b.tsx\nsrc/c.test.ts')
    expect(text(await call('glob', { pattern: '**/{*.test.ts,*.spec.ts,*.test.tsx,*.spec.tsx}' }))).toBe('src/c.test.ts')
  })

  it('respects .gitignore files, nested ones and negations, and always skips .git', async () => {
    tree({
      '.gitignore': 'node_modules/\n*.log\n!keep.log\n',
      'node_modules/x/index.js': '',
      'app.log': '',
      'keep.log': '',
      '.git/config': '',
      'pkg/.gitignore': 'generated/\n',
      'pkg/generated/out.ts': '',
      'pkg/src.ts': '',
      'other/generated/kept.ts': '',
    })
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '**/*' }))).toBe([
      '.gitignore', 'keep.log', 'other/generated/kept.ts', 'pkg/.gitignore', 'pkg/src.ts',
    ].join('\n'))
  })

  it('lists inside an ignored folder when asked for it by path', async () => {
    tree({ '.gitignore': 'node_modules/\n', 'node_modules/lib/index.js': '', 'node_modules/lib/util.js': '' })
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '*.js', path: 'node_modules/lib' }))).toBe('node_modules/lib/index.js\nnode_modules/lib/util.js')
  })

  it('lists ignored files too with gitignore: false', async () => {
    tree({ '.gitignore': '*.log\n', 'a.log': '' })
    const { call } = await boot(folders(), { config: { gitignore: false } })
    expect(text(await call('glob', { pattern: '*' }))).toBe('.gitignore\na.log')
  })

  it('caps the list and says how many there were', async () => {
    tree(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, ''])))
    const { call } = await boot(folders(), { config: { globLimit: 5 } })
    const result = await call('glob', { pattern: '*.txt' })
    expect(text(result)).toBe('f00.txt\nf01.txt\nf02.txt\nf03.txt\nf04.txt\n[5 of 30 matching files shown. Narrow the pattern or the path to see the rest.]')
  })

  it('says when nothing matches', async () => {
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: '**/*.rs' }))).toBe('No files match **/*.rs.')
  })

  it('takes an absolute pattern inside the workspace as the model would write it, instead of calling it outside', async () => {
    tree({ 'src/a.ts': 'hit\n', 'src/deep/b.ts': 'hit\n', 'lib/c.ts': 'hit\n' })
    const { workspace } = folders()
    const { call } = await boot(folders())
    expect(text(await call('glob', { pattern: `${workspace}/src/**/*.ts` }))).toBe('src/a.ts\nsrc/deep/b.ts')
    expect(text(await call('glob', { pattern: `${workspace}/src/*.ts`, path: 'src' }))).toBe('src/a.ts')
    expect(text(await call('grep', { pattern: 'hit', glob: `${workspace}/src/*.ts` }))).toBe('src/a.ts\n1: hit')
    // Inside the workspace but not under path: nothing there is searched, and the model is told how to write it.
    const elsewhere = await call('glob', { pattern: `${workspace}/lib/*.ts`, path: 'src' })
    expect(codeOf(elsewhere)).toBe('INVALID_PATTERN')
    expect(text(elsewhere)).toContain('is not under src')
  })

  it('says an absolute pattern outside the workspace is outside it, without blaming a ".." it does not have', async () => {
    const { call } = await boot(folders())
    const outside = await call('glob', { pattern: '/etc/*' })
    expect(codeOf(outside)).toBe('PATH_OUTSIDE_WORKSPACE')
    expect(text(outside)).toContain('pattern "/etc/*" is an absolute path outside the folder it is matched in')
    expect(text(outside)).not.toContain('..')
    expect(text(await call('glob', { pattern: '../x/*' }))).toContain('without ".."')
  })

  it('refuses a file as path', async () => {
    tree({ 'a.txt': '' })
    const { call } = await boot(folders())
    expect(codeOf(await call('glob', { pattern: '*', path: 'a.txt' }))).toBe('NOT_A_REGULAR_FILE')
  })
})

describe('grep', () => {
  it('lists matching lines grouped by file, in path order', async () => {
    tree({
      'src/b.ts': 'import { foo } from "./a"\nfoo()\n',
      'src/a.ts': 'export const foo = 1\nconst bar = 2\n',
      'src/c.ts': 'nothing here\n',
    })
    const { call } = await boot(folders())
    const result = await call('grep', { pattern: 'foo' })
    expect(text(result)).toBe('src/a.ts\n1: export const foo = 1\n\nsrc/b.ts\n1: import { foo } from "./a"\n2: foo()')
    expect(result).toMatchObject({ value: { matches: 3, searched: 3, truncated: false } })
  })

  it('narrows by path and by glob, a bare name matching at any depth', async () => {
    tree({ 'src/a.ts': 'hit\n', 'src/a.js': 'hit\n', 'lib/deep/b.ts': 'hit\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: 'hit', glob: '*.ts' }))).toBe('lib/deep/b.ts\n1: hit\n\nsrc/a.ts\n1: hit')
    expect(text(await call('grep', { pattern: 'hit', path: 'src' }))).toBe('src/a.js\n1: hit\n\nsrc/a.ts\n1: hit')
    expect(text(await call('grep', { pattern: 'hit', path: 'src/a.js' }))).toBe('src/a.js\n1: hit')
  })

  it('takes (?i) for case-insensitive search and names a bad pattern', async () => {
    tree({ 'a.txt': 'Hello\nhello\nHELLO\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: '(?i)hello' }))).toBe('a.txt\n1: Hello\n2: hello\n3: HELLO')
    expect(await call('grep', { pattern: 'a(b' })).toMatchObject({ isError: true, error: { code: 'INVALID_PATTERN' } })
  })

  it('refuses a pattern holding a line break, which can never match one line, instead of answering no matches', async () => {
    tree({ 'a.txt': 'hello\nworld\n' })
    const { call } = await boot(folders())
    for (const pattern of ['hello\\nworld', 'hello\nworld', '(?i)hello\\n']) {
      const result = await call('grep', { pattern })
      expect(codeOf(result)).toBe('INVALID_PATTERN')
      expect(text(result)).toContain('one line at a time')
    }
    // An escaped backslash before n, and \n inside a class, are no line break.
    tree({ 'b.txt': 'x\\ny\n' })
    expect(text(await call('grep', { pattern: 'x\\\\ny' }))).toBe('b.txt\n1: x\\ny')
    expect(text(await call('grep', { pattern: 'hel[^\\n]o' }))).toBe('a.txt\n1: hello')
  })

  it('takes the inline flags (?m) and (?s) as no-ops on one line, and names an inline flag it cannot take', async () => {
    tree({ 'a.txt': 'Hello\nhello\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: '(?im)^hello$' }))).toBe('a.txt\n1: Hello\n2: hello')
    expect(text(await call('grep', { pattern: '(?s)hel+o' }))).toBe('a.txt\n2: hello')
    const refused = await call('grep', { pattern: '(?x)hello' })
    expect(codeOf(refused)).toBe('INVALID_PATTERN')
    expect(text(refused)).toContain('(?x)')
    expect(text(refused)).toContain('(?i)')
  })

  it('finds nothing a file does not hold in a line longer than it keeps: the cut line\'s rest is not joined to its head', async () => {
    // 1 MiB of b, then X, then c's and YZ: the file never holds "XY".
    tree({ 'long.txt': `${'b'.repeat(1_048_575)}X${'c'.repeat(131_072)}YZ\nXY on the next line\n` })
    const { call } = await boot(folders())
    const result = await call('grep', { pattern: 'XY' })
    expect(text(result)).toBe('long.txt\n2: XY on the next line')
  })

  it('matches ^ and $ per line, in CRLF files too', async () => {
    tree({ 'win.txt': 'end\r\nnot end here\r\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: '^end$' }))).toBe('win.txt\n1: end')
  })

  it('finds a match a look-behind needs the line start for', async () => {
    tree({ 'a.txt': 'x\nfoo\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: '(?<!\\s)foo' }))).toBe('a.txt\n2: foo')
  })

  it('counts lines across chunk boundaries', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => (i === 15_000 ? 'needle' : `hay ${i}`))
    tree({ 'big.txt': lines.join('\n') })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: 'needle' }))).toBe('big.txt\n15001: needle')
  })

  it('skips binary files and .gitignore\'d ones', async () => {
    tree({ '.gitignore': 'dist/\n', 'dist/out.js': 'needle\n', 'blob.bin': Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1])]), 'ok.txt': 'needle\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: 'needle' }))).toBe('ok.txt\n1: needle')
  })

  it('caps the matches in path order and says there are more', async () => {
    tree(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, 'match\nmatch\n'])))
    const { call } = await boot(folders(), { config: { grepMatches: 5 } })
    const result = await call('grep', { pattern: 'match' })
    expect(text(result)).toBe([
      'f00.txt', '1: match', '2: match', '',
      'f01.txt', '1: match', '2: match', '',
      'f02.txt', '1: match',
      '[Showing the first 5 matching lines in 3 files; there are more. Narrow the pattern, path or glob to see them.]',
    ].join('\n'))
    expect(result).toMatchObject({ value: { truncated: true, matches: 5 } })
  })

  it('shows a long line around its match', async () => {
    tree({ 'min.js': `${'a'.repeat(5000)}NEEDLE${'b'.repeat(5000)}\n` })
    const { call } = await boot(folders())
    const shown = text(await call('grep', { pattern: 'NEEDLE' }))
    expect(shown).toBe(`min.js\n1: …${'a'.repeat(60)}NEEDLE${'b'.repeat(174)}…`)
  })

  it('says when nothing matches and how many files it read', async () => {
    tree({ 'a.txt': 'x\n', 'b.txt': 'y\n' })
    const { call } = await boot(folders())
    expect(text(await call('grep', { pattern: 'zzz' }))).toBe('No matches for zzz (2 files searched).')
  })

  it('says a binary file it was pointed at is binary and was not searched, rather than "No matches"', async () => {
    tree({ 'logo.png': Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2])]) })
    const { call } = await boot(folders())
    const result = await call('grep', { pattern: 'needle', path: 'logo.png' })
    expect(result).toMatchObject({ isError: false, value: { matches: 0, searched: 0, binary: 1, binaryFile: true } })
    expect(text(result)).toBe('[logo.png is a binary file, so grep did not search it: grep and read show text files only. To look inside it, run a command such as strings or xxd, if you can run commands.]')
  })

  it('counts binary files in a folder as not searched, and says so when nothing matches', async () => {
    const blob = Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1])])
    tree({ 'dir/a.bin': blob, 'dir/b.bin': blob, 'dir/c.txt': 'hay\n', 'only/x.bin': blob })
    const { call } = await boot(folders())
    const none = await call('grep', { pattern: 'needle', path: 'dir' })
    expect(text(none)).toBe('No matches for needle in dir (1 file searched; 2 binary files not searched: grep searches text files only).')
    expect(none).toMatchObject({ value: { searched: 1, binary: 2, binaryFile: false } })
    // A folder holding one binary file is still a folder: not the one-file answer.
    expect(text(await call('grep', { pattern: 'needle', path: 'only' }))).toBe('No matches for needle in only (0 files searched; 1 binary file not searched: grep searches text files only).')
    // With matches the answer is the matches: the description already says binary files are skipped.
    expect(text(await call('grep', { pattern: 'hay' }))).toBe('dir/c.txt\n1: hay')
  })
})

describe('grep with a pattern that backtracks catastrophically', () => {
  // (a+)+$ over 42 a's and a b tries about 2^42 ways to split the a's: it never ends in practice.
  const HOSTILE = { 'bad.txt': `${'a'.repeat(42)}b\n`, 'ok.txt': 'fine\n' }
  const TIMEOUT = 'grep stopped: the pattern ran for more than 200 ms on one part of bad.txt, which usually means it backtracks catastrophically (nested quantifiers such as (a+)+, or alternatives that overlap such as (a|a)*); write it without them, or narrow path or glob'
  /** Threads of this process: a regex left running would keep one. */
  const threads = () => readdirSync('/proc/self/task').length

  it('ends with GREP_TIMEOUT naming the file, answering other calls meanwhile', async () => {
    tree(HOSTILE)
    const { call } = await boot(folders(), { config: { grepTimeoutMs: 200 } })
    const before = threads()
    const pending = call('grep', { pattern: '(a+)+$' })
    expect(text(await call('read', { path: 'ok.txt' }))).toBe('1\tfine')
    expect(await pending).toMatchObject({ isError: true, error: { code: 'GREP_TIMEOUT', message: TIMEOUT } })
    await vi.waitFor(() => expect(threads()).toBe(before))
    expect(text(await call('grep', { pattern: 'fine' }))).toBe('ok.txt\n1: fine')
  })

  it('does not count the thread\'s start against grepTimeoutMs: a busy machine starting it slowly is no timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const matcher = new Matcher(compilePattern('fine'), { timeoutMs: 50 })
    try {
      const pending = matcher.match('fine\nother', 10, 'ok.txt')
      // Time passes before the thread is up (on a loaded machine, hundreds of ms).
      vi.advanceTimersByTime(1000)
      await expect(pending).resolves.toEqual([[0, 0]])
    } finally {
      vi.useRealTimers()
      await matcher.close()
    }
  })

  it('stops matching when the call is cancelled', async () => {
    tree(HOSTILE)
    const { call } = await boot(folders())
    const before = threads()
    const controller = new AbortController()
    const pending = call('grep', { pattern: '(a+)+$' }, {}, controller.signal)
    // Time for the search to reach bad.txt; the outcome is the same if it has not yet.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(text(await call('read', { path: 'ok.txt' }))).toBe('1\tfine')
    controller.abort()
    expect(await pending).toMatchObject({ isError: true, error: { code: 'ABORTED' } })
    await vi.waitFor(() => expect(threads()).toBe(before))
  })

  it('ends with GREP_TIMEOUT in a process started with tsx, as rein runs from source', () => {
    tree(HOSTILE)
    const repository = fileURLToPath(new URL('../../../../', import.meta.url))
    const script = fileURLToPath(new URL('./fixtures/calls-as-user.ts', import.meta.url))
    const input = { workspace: folders().workspace, calls: [['grep', { pattern: '(a+)+$' }], ['grep', { pattern: 'fine' }]], config: { grepTimeoutMs: 200 } }
    // The timeout only ends a child that hangs; the answer does not depend on it.
    const child = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, JSON.stringify(input)], {
      cwd: repository, encoding: 'utf8', env: { ...process.env, HOME: tmpdir() }, timeout: 20_000,
    })
    expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({ status: 0, signal: null, stderr: '' })
    expect(JSON.parse(child.stdout)).toEqual([{ code: 'GREP_TIMEOUT', message: TIMEOUT }, { code: 'ok' }])
  }, 30_000)
})
