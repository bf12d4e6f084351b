import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, codeOf, text, useFolders, write } from './harness.ts'

const folders = useFolders()
const file = (name: string) => join(folders().workspace, name)
const NOT_READ = (path: string) => `${path} already exists and has not been read in this session since rein started (reads from before a restart or resume are not remembered); read it now (any part), then try again`

describe('write', () => {
  it('creates a new file (and its folders) without a read, and returns before: null', async () => {
    const { call } = await boot(folders())
    const result = await call('write', { path: 'src/deep/new.ts', content: 'export {}\n' })
    expect(result).toMatchObject({ isError: false, value: { path: 'src/deep/new.ts', operation: 'create', before: null, after: 'export {}\n' } })
    expect(text(result)).toBe('Created src/deep/new.ts (1 line).')
    expect(readFileSync(file('src/deep/new.ts'), 'utf8')).toBe('export {}\n')
  })

  it('refuses to create a file under ~, which is not the home folder here, instead of making a folder named ~ in the workspace', async () => {
    const { call } = await boot(folders())
    const result = await call('write', { path: '~/.config/app.json', content: '{}\n' })
    expect(codeOf(result)).toBe('INVALID_PATH')
    expect(text(result)).toContain('~ is not your home folder here')
    expect(readdirSync(folders().workspace)).toEqual([])
    const read = await call('read', { path: '~/.bashrc' })
    expect(codeOf(read)).toBe('FILE_NOT_FOUND')
    expect(text(read)).toContain('~ is not your home folder here')
    // A folder that really is named ~ in the workspace is used like any other.
    mkdirSync(file('~'))
    expect(codeOf(await call('write', { path: '~/notes.txt', content: 'x\n' }))).toBe('ok')
    expect(readFileSync(file('~/notes.txt'), 'utf8')).toBe('x\n')
  })

  it('writes a file whose name is as long as the file system allows (255 bytes)', async () => {
    const { call } = await boot(folders())
    const name = '記'.repeat(85)
    expect(codeOf(await call('write', { path: name, content: 'x\n' }))).toBe('ok')
    expect(readFileSync(file(name), 'utf8')).toBe('x\n')
  })

  it('refuses to overwrite a file this session has not read, then overwrites it after a read', async () => {
    write(file('a.txt'), 'old\n')
    const { call } = await boot(folders())
    const refused = await call('write', { path: 'a.txt', content: 'new\n' })
    expect(refused).toMatchObject({ isError: true, error: { code: 'FILE_NOT_READ', message: NOT_READ('a.txt') } })
    expect(readFileSync(file('a.txt'), 'utf8')).toBe('old\n')
    await call('read', { path: 'a.txt' })
    const result = await call('write', { path: 'a.txt', content: 'new\nlines\n' })
    expect(result).toMatchObject({ isError: false, value: { operation: 'update', before: 'old\n', after: 'new\nlines\n' } })
    expect(text(result)).toBe('Replaced the content of a.txt: 2 lines (it had 1).')
  })

  it('tracks reads per session: another session must read the file itself', async () => {
    write(file('a.txt'), 'old\n')
    const { call } = await boot(folders())
    await call('read', { path: 'a.txt' }, { sessionId: 'one' })
    expect(codeOf(await call('write', { path: 'a.txt', content: 'x' }, { sessionId: 'two' }))).toBe('FILE_NOT_READ')
    expect(codeOf(await call('write', { path: 'a.txt', content: 'x' }, { sessionId: 'one' }))).toBe('ok')
  })

  it('asks for a new read, saying why, when the file was read before rein restarted', async () => {
    write(file('a.txt'), 'old\n')
    const before = await boot(folders())
    await before.call('read', { path: 'a.txt' }, { sessionId: 'resumed' })
    await before.fiber.dispose()
    // The resumed session in a new process: the same session id, none of the earlier reads.
    const after = await boot(folders())
    const refused = await after.call('edit', { path: 'a.txt', old_string: 'old', new_string: 'new' }, { sessionId: 'resumed' })
    expect(refused).toMatchObject({ isError: true, error: { code: 'FILE_NOT_READ', message: NOT_READ('a.txt') } })
    await after.call('read', { path: 'a.txt' }, { sessionId: 'resumed' })
    expect(codeOf(await after.call('edit', { path: 'a.txt', old_string: 'old', new_string: 'new' }, { sessionId: 'resumed' }))).toBe('ok')
  })

  it('refuses a file changed since it was read, and accepts one only touched', async () => {
    write(file('a.txt'), 'old\n')
    const { call } = await boot(folders())
    await call('read', { path: 'a.txt' })
    utimesSync(file('a.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1))
    expect(codeOf(await call('edit', { path: 'a.txt', old_string: 'old', new_string: 'touched' }))).toBe('ok')
    write(file('a.txt'), 'changed by someone\n')
    const refused = await call('edit', { path: 'a.txt', old_string: 'changed', new_string: 'x' })
    expect(refused).toMatchObject({ isError: true, error: { code: 'FILE_CHANGED_SINCE_READ' } })
    expect(text(refused)).toBe('Error: a.txt changed since it was last read (by someone else, or a command); read it again, then redo the change on its current content')
    expect(readFileSync(file('a.txt'), 'utf8')).toBe('changed by someone\n')
  })

  it('lets one of two writes to one file that reach their last check together land, and refuses the other: none is lost', async () => {
    /** Holds each write after its first checks until both got there: then both make their last check at once. */
    const together = () => {
      let arrived = 0
      let release = () => {}
      const both = new Promise<void>((resolve) => { release = resolve })
      return { afterCheck: async () => { if (++arrived === 2) release(); await both } }
    }
    write(file('shared.txt'), 'alpha\nbeta\n')
    const edits = await boot(folders(), { hooks: together() })
    await edits.call('read', { path: 'shared.txt' }, { sessionId: 's1' })
    await edits.call('read', { path: 'shared.txt' }, { sessionId: 's2' })
    const [a, b] = await Promise.all([
      edits.call('edit', { path: 'shared.txt', old_string: 'alpha', new_string: 'ALPHA' }, { sessionId: 's1' }),
      edits.call('edit', { path: 'shared.txt', old_string: 'beta', new_string: 'BETA' }, { sessionId: 's2' }),
    ])
    expect([codeOf(a), codeOf(b)].sort()).toEqual(['FILE_CHANGED_SINCE_READ', 'ok'])
    expect(readFileSync(file('shared.txt'), 'utf8')).toBe(codeOf(a) === 'ok' ? 'ALPHA\nbeta\n' : 'alpha\nBETA\n')
    const creates = await boot(folders(), { hooks: together() })
    const [one, two] = await Promise.all([
      creates.call('write', { path: 'new.txt', content: 'from s1\n' }, { sessionId: 's1' }),
      creates.call('write', { path: 'new.txt', content: 'from s2\n' }, { sessionId: 's2' }),
    ])
    expect([codeOf(one), codeOf(two)].filter((code) => code === 'ok')).toHaveLength(1)
    expect(readFileSync(file('new.txt'), 'utf8')).toBe(codeOf(one) === 'ok' ? 'from s1\n' : 'from s2\n')
  })

  it('lets the session edit again after its own write without reading', async () => {
    const { call } = await boot(folders())
    await call('write', { path: 'n.txt', content: 'one\n' })
    expect(codeOf(await call('edit', { path: 'n.txt', old_string: 'one', new_string: 'two' }))).toBe('ok')
    expect(codeOf(await call('write', { path: 'n.txt', content: 'three\n' }))).toBe('ok')
  })

  it('keeps the file mode, and a byte-order mark the file had', async () => {
    write(file('run.sh'), '\uFEFFecho hi\n')
    chmodSync(file('run.sh'), 0o751)
    const { call } = await boot(folders())
    await call('read', { path: 'run.sh' })
    await call('edit', { path: 'run.sh', old_string: 'hi', new_string: 'there' })
    expect(statSync(file('run.sh')).mode & 0o777).toBe(0o751)
    expect(readFileSync(file('run.sh'), 'utf8')).toBe('\uFEFFecho there\n')
  })

  it.runIf(process.getuid?.() === 0)('keeps another user\'s file theirs, setuid bit included (a chown clears it, so the mode comes after)', async () => {
    write(file('tool'), 'v1\n')
    chownSync(file('tool'), 65534, 65534)
    chmodSync(file('tool'), 0o4755)
    const { call } = await boot(folders())
    await call('read', { path: 'tool' })
    expect(codeOf(await call('edit', { path: 'tool', old_string: 'v1', new_string: 'v2' }))).toBe('ok')
    const after = statSync(file('tool'))
    expect([after.uid, after.gid, (after.mode & 0o7777).toString(8)]).toEqual([65534, 65534, '4755'])
  })

  it('says PERMISSION_DENIED, not a raw EROFS, for a file on a read-only mount (where mounting is allowed)', async (context) => {
    const mount = file('ro')
    mkdirSync(mount)
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]).status === 0
    if (!mounted) return context.skip()
    try {
      write(join(mount, 'a.txt'), 'v1\n')
      execFileSync('mount', ['-o', 'remount,ro', mount])
      const { call } = await boot(folders())
      await call('read', { path: 'ro/a.txt' })
      expect(await call('edit', { path: 'ro/a.txt', old_string: 'v1', new_string: 'v2' })).toMatchObject({ isError: true, error: { code: 'PERMISSION_DENIED', message: expect.stringContaining('read-only') } })
    } finally {
      spawnSync('umount', [mount])
    }
  })

  it.each([
    ['a path ending with / (a folder)', 'newdir/', 'ends with /'],
    ['a new name with a line break', 'line\nbreak.txt', 'control character'],
  ])('refuses to create %s, making nothing', async (_case, path, words) => {
    const { call } = await boot(folders())
    expect(await call('write', { path, content: 'x' })).toMatchObject({ isError: true, error: { code: 'INVALID_PATH', message: expect.stringContaining(words) } })
    expect(readdirSync(folders().workspace)).toEqual([])
  })

  it('leaves no temporary file behind', async () => {
    const { call } = await boot(folders())
    await call('write', { path: 'a.txt', content: 'x' })
    await call('edit', { path: 'a.txt', old_string: 'x', new_string: 'y' })
    expect(readdirSync(folders().workspace)).toEqual(['a.txt'])
  })

  it('refuses to replace a binary or non-UTF-8 file, leaving it as it was', async () => {
    write(file('bin'), Buffer.from([1, 0, 2]))
    write(file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]))
    const { call } = await boot(folders())
    await call('read', { path: 'bin' })
    await call('read', { path: 'latin1.txt' })
    expect(await call('write', { path: 'bin', content: 'text' })).toMatchObject({ isError: true, error: { code: 'NOT_TEXT', message: 'bin is a binary file; write and edit change text files only' } })
    expect(await call('edit', { path: 'latin1.txt', old_string: 'caf', new_string: 'tea' })).toMatchObject({
      isError: true, error: { code: 'NOT_TEXT', message: 'latin1.txt is not valid UTF-8; editing it here could change bytes you cannot see, so change it another way' },
    })
    expect(readFileSync(file('bin'))).toEqual(Buffer.from([1, 0, 2]))
    expect(readFileSync(file('latin1.txt'))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
  })

  it('refuses to write over a FIFO or a folder, without hanging on the FIFO', async () => {
    execFileSync('mkfifo', [file('pipe')])
    mkdirSync(file('dir'))
    const { call } = await boot(folders())
    expect(await call('write', { path: 'pipe', content: 'x' })).toMatchObject({ isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'pipe is a named pipe (FIFO), not a file' } })
    expect(await call('write', { path: 'dir', content: 'x' })).toMatchObject({ isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'dir is a folder; use glob to list what is in it' } })
    expect(statSync(file('pipe')).isFIFO()).toBe(true)
  })

  it('refuses a file over maxFileBytes, and content over it', async () => {
    write(file('big.txt'), 'x'.repeat(2000))
    const { call } = await boot(folders(), { config: { maxFileBytes: 1024 } })
    await call('read', { path: 'big.txt' })
    expect(await call('edit', { path: 'big.txt', old_string: 'x', new_string: 'y', replace_all: true })).toMatchObject({
      isError: true, error: { code: 'FILE_TOO_LARGE', message: 'big.txt is 2.0 KiB; write and edit handle files up to 1.0 KiB, so change this one another way (a command such as sed)' },
    })
    expect(codeOf(await call('write', { path: 'new.txt', content: 'y'.repeat(1025) }))).toBe('FILE_TOO_LARGE')
    expect(readFileSync(file('big.txt'), 'utf8')).toBe('x'.repeat(2000))
  })
})

describe('edit', () => {
  const source = ['function greet(name) {', '  const text = `hi ${name}`', '  return text', '}', ''].join('\n')

  it('replaces one exact match and shows the changed part, numbered', async () => {
    write(file('g.js'), source)
    const { call } = await boot(folders())
    await call('read', { path: 'g.js' })
    const result = await call('edit', { path: 'g.js', old_string: '  return text', new_string: '  console.log(text)\n  return text' })
    expect(result).toMatchObject({ isError: false, value: { path: 'g.js', operation: 'update', before: source, replacements: 1 } })
    expect(text(result)).toBe([
      'Edited g.js (1 replacement). The changed part now reads:',
      '1\tfunction greet(name) {',
      '2\t  const text = `hi ${name}`',
      '3\t  console.log(text)',
      '4\t  return text',
      '5\t}',
    ].join('\n'))
  })

  it('names the nearest text when old_string differs only in whitespace', async () => {
    write(file('g.js'), source)
    const { call } = await boot(folders())
    await call('read', { path: 'g.js' })
    const result = await call('edit', { path: 'g.js', old_string: 'const  text = `hi ${name}`\nreturn text', new_string: 'x' })
    expect(result).toMatchObject({ isError: true, error: { code: 'EDIT_NOT_FOUND' } })
    expect(text(result)).toBe([
      'Error: old_string was not found in g.js; it matches lines 2-3 only if whitespace is ignored (indentation, spaces or line breaks differ):',
      '2\t  const text = `hi ${name}`',
      '3\t  return text',
      'Copy the text exactly as read shows it (indentation included, without the line-number prefix), or read the file again.',
    ].join('\n'))
  })

  it('says why a text that looks the same is not found when the file and old_string compose accented letters differently (NFD against NFC)', async () => {
    write(file('n.txt'), 'cafe\u0301 au lait\n')
    const { call } = await boot(folders())
    await call('read', { path: 'n.txt' })
    const result = await call('edit', { path: 'n.txt', old_string: 'caf\u00e9 au lait', new_string: 'coffee' })
    expect(result).toMatchObject({ isError: true, error: { code: 'EDIT_NOT_FOUND' } })
    expect(text(result)).toContain('matches line 1 only if its accented letters are composed alike')
  })

  it('shows the most similar passage when old_string is misremembered', async () => {
    write(file('g.js'), source)
    const { call } = await boot(folders())
    await call('read', { path: 'g.js' })
    const result = await call('edit', { path: 'g.js', old_string: '  const text = `hello ${name}`', new_string: 'x' })
    expect(text(result)).toBe([
      'Error: old_string was not found in g.js. The most similar passages:',
      'line 2:',
      '2\t  const text = `hi ${name}`',
      'Copy the text exactly as read shows it (indentation included, without the line-number prefix), or read the file again.',
    ].join('\n'))
  })

  it('says old_string holds read\'s line-number prefixes, and where it matches without them', async () => {
    write(file('g.js'), source)
    const { call } = await boot(folders())
    await call('read', { path: 'g.js' })
    const result = await call('edit', { path: 'g.js', old_string: '2\t  const text = `hi ${name}`\n3\t  return text', new_string: 'x' })
    expect(codeOf(result)).toBe('EDIT_NOT_FOUND')
    expect(text(result)).toBe('Error: old_string was not found in g.js: each of its lines starts with a line number and a tab, as read shows them, but those are not part of the file. Without them it matches lines 2-3; send old_string (and new_string) without the numbers.')
    expect(readFileSync(file('g.js'), 'utf8')).toBe(source)
  })

  it('does not blame line numbers for a typo in a tab-separated file whose lines start with numbers: the similar passages are shown', async () => {
    const table = '1\talice\n2\tbob\n3\tcarol\n'
    write(file('t.tsv'), table)
    const { call } = await boot(folders())
    await call('read', { path: 't.tsv' })
    const result = await call('edit', { path: 't.tsv', old_string: '2\tbob\n3\tcarl', new_string: 'x' })
    expect(codeOf(result)).toBe('EDIT_NOT_FOUND')
    expect(text(result)).not.toContain('not part of the file')
    expect(text(result)).toContain('The most similar passages')
  })

  it('says when nothing resembles old_string', async () => {
    write(file('g.js'), source)
    const { call } = await boot(folders())
    await call('read', { path: 'g.js' })
    expect(text(await call('edit', { path: 'g.js', old_string: 'SELECT * FROM users', new_string: 'x' }))).toBe(
      'Error: old_string was not found in g.js, and no passage resembles it; read the file to see its current text.',
    )
  })

  it('refuses an ambiguous match naming every line, and replaces all with replace_all', async () => {
    write(file('t.txt'), 'a = 1\nb = a\nc = a\n')
    const { call } = await boot(folders())
    await call('read', { path: 't.txt' })
    const ambiguous = await call('edit', { path: 't.txt', old_string: 'a', new_string: 'z' })
    expect(ambiguous).toMatchObject({
      isError: true,
      error: { code: 'EDIT_AMBIGUOUS', message: 'old_string matches 3 places in t.txt (at lines 1, 2, 3). Include more of the surrounding lines so it matches one place only, or set replace_all to true to change every one.' },
    })
    const all = await call('edit', { path: 't.txt', old_string: 'a', new_string: 'z', replace_all: true })
    expect(all).toMatchObject({ isError: false, value: { replacements: 3, after: 'z = 1\nb = z\nc = z\n' } })
  })

  it('refuses an edit that changes nothing', async () => {
    write(file('t.txt'), 'same\n')
    const { call } = await boot(folders())
    await call('read', { path: 't.txt' })
    expect(codeOf(await call('edit', { path: 't.txt', old_string: 'same', new_string: 'same' }))).toBe('EDIT_NO_CHANGE')
  })

  it('tells the model to use write for a file that does not exist', async () => {
    const { call } = await boot(folders())
    expect(await call('edit', { path: 'nope.txt', old_string: 'a', new_string: 'b' })).toMatchObject({
      isError: true, error: { code: 'FILE_NOT_FOUND', message: 'nope.txt does not exist; use write to create a new file' },
    })
  })

  it('matches plain newlines against a CRLF file and keeps its CRLF', async () => {
    write(file('win.txt'), 'one\r\ntwo\r\nthree\r\n')
    const { call } = await boot(folders())
    await call('read', { path: 'win.txt' })
    expect(codeOf(await call('edit', { path: 'win.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' }))).toBe('ok')
    expect(readFileSync(file('win.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n')
  })

  it.each([
    ['a mostly-CRLF file whose few LF lines hold it', 'a\r\nb\r\nc\r\nx\ny\n', 'x\ny', 'X\nY', 'a\r\nb\r\nc\r\nX\nY\n'],
    ['a mostly-LF file whose few CRLF lines hold it (read shows them without the CR)', 'l1\nl2\r\nl3\nl4\n', 'l2\nl3', 'two\nthree', 'l1\ntwo\r\nthree\nl4\n'],
    ['a CRLF file, the CR typed in old_string: new_string as written (line ends changed on purpose)', 'one\r\ntwo\r\n', 'one\r\n', 'uno\nextra\n', 'uno\nextra\ntwo\r\n'],
    ['a one-line old_string in a CRLF file, new_string adding a line', 'one\r\ntwo\r\n', 'one', 'uno\nuno bis', 'uno\r\nuno bis\r\ntwo\r\n'],
  ])('edits text as read shows it in %s, writing the line breaks in use there', async (_case, before, oldString, newString, after) => {
    write(file('mixed.txt'), before)
    const { call } = await boot(folders())
    await call('read', { path: 'mixed.txt' })
    expect(codeOf(await call('edit', { path: 'mixed.txt', old_string: oldString, new_string: newString }))).toBe('ok')
    expect(readFileSync(file('mixed.txt'), 'utf8')).toBe(after)
  })

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ])('edits with an old_string of thousands of lines (%s file): no regular expression of its size to overflow', async (_name, eol) => {
    const lines = Array.from({ length: 8_000 }, (_, i) => `line ${i}`)
    write(file('long.txt'), lines.join(eol) + eol)
    const { call } = await boot(folders())
    await call('read', { path: 'long.txt', limit: 10 })
    const result = await call('edit', { path: 'long.txt', old_string: lines.slice(0, 7_000).join('\n'), new_string: 'head' })
    expect(codeOf(result)).toBe('ok')
    expect(readFileSync(file('long.txt'), 'utf8')).toBe(['head', ...lines.slice(7_000)].join(eol) + eol)
  })

  it('edits across a CRLF break when old_string starts or ends with a line break, keeping no stray CR', async () => {
    write(file('edge.txt'), 'a\r\nb\r\nc\r\n')
    const { call } = await boot(folders())
    await call('read', { path: 'edge.txt' })
    expect(codeOf(await call('edit', { path: 'edge.txt', old_string: '\nb\n', new_string: '\nB\n' }))).toBe('ok')
    expect(readFileSync(file('edge.txt'), 'utf8')).toBe('a\r\nB\r\nc\r\n')
  })

  it.each([
    ['aba in ababa', 'ababa', 'aba'],
    ['two closing braces in three', 'x\n}\n}\n}\n', '}\n}'],
  ])('refuses an old_string that matches overlapping places as ambiguous: %s', async (_case, before, oldString) => {
    write(file('o.txt'), before)
    const { call } = await boot(folders())
    await call('read', { path: 'o.txt' })
    expect(codeOf(await call('edit', { path: 'o.txt', old_string: oldString, new_string: 'X' }))).toBe('EDIT_AMBIGUOUS')
    expect(readFileSync(file('o.txt'), 'utf8')).toBe(before)
  })

  it('does not treat $ in new_string as a replacement pattern', async () => {
    write(file('t.txt'), 'price\nprice\n')
    const { call } = await boot(folders())
    await call('read', { path: 't.txt' })
    await call('edit', { path: 't.txt', old_string: 'price', new_string: "$& $1 $$ $'", replace_all: true })
    expect(readFileSync(file('t.txt'), 'utf8')).toBe("$& $1 $$ $'\n$& $1 $$ $'\n")
  })
})

describe('multi_edit', () => {
  it('applies edits in order, each to the result of the ones before', async () => {
    write(file('m.txt'), 'alpha\nbeta\n')
    const { call } = await boot(folders())
    await call('read', { path: 'm.txt' })
    const result = await call('multi_edit', {
      path: 'm.txt',
      edits: [{ old_string: 'alpha', new_string: 'gamma' }, { old_string: 'gamma\nbeta', new_string: 'gamma\ndelta' }],
    })
    expect(result).toMatchObject({ isError: false, value: { replacements: 2, after: 'gamma\ndelta\n' } })
  })

  it('changes nothing when any edit fails, and names the edit', async () => {
    write(file('m.txt'), 'alpha\nbeta\n')
    const { call } = await boot(folders())
    await call('read', { path: 'm.txt' })
    const result = await call('multi_edit', {
      path: 'm.txt',
      edits: [{ old_string: 'alpha', new_string: 'gamma' }, { old_string: 'zeta', new_string: 'x' }],
    })
    expect(result).toMatchObject({ isError: true, error: { code: 'EDIT_NOT_FOUND' } })
    expect(text(result)).toMatch(/^Error: edit 2 of 2: old_string was not found in m\.txt.* No edit was applied; the file is unchanged\.$/s)
    expect(readFileSync(file('m.txt'), 'utf8')).toBe('alpha\nbeta\n')
  })

  it('refuses edits that together leave the file as it was', async () => {
    write(file('m.txt'), 'alpha\n')
    const { call } = await boot(folders())
    await call('read', { path: 'm.txt' })
    expect(codeOf(await call('multi_edit', {
      path: 'm.txt',
      edits: [{ old_string: 'alpha', new_string: 'beta' }, { old_string: 'beta', new_string: 'alpha' }],
    }))).toBe('EDIT_NO_CHANGE')
  })

  it('refuses an empty edit list before running', async () => {
    mkdirSync(join(folders().workspace, 'x'))
    const { call } = await boot(folders())
    expect(codeOf(await call('multi_edit', { path: 'm.txt', edits: [] }))).toBe('INVALID_ARGS')
  })
})
