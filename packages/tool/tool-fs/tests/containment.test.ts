// The path-escape corpus: every way out of the workspace we know of is refused, and the tree
// outside it is byte-for-byte what it was (listed and hashed before and after).
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { openRegularFile } from '../src/open-file.ts'
import { Matcher } from '../src/matcher.ts'
import { compilePattern, searchFiles } from '../src/search.ts'
import type { Resolved } from '../src/workspace.ts'
import { boot, codeOf, fingerprint, text, useFolders, write, type Folders } from './harness.ts'

const folders = useFolders()
const SECRET = 'TOP SECRET'

/** The workspace and what lies around it: links out of it in every shape. */
function plant({ workspace, outside }: Folders) {
  write(join(outside, 'secret.txt'), `${SECRET}\n`)
  mkdirSync(join(outside, 'nested'))
  write(join(outside, 'nested', 'deep.txt'), `${SECRET} deep\n`)
  write(join(workspace, 'inside.txt'), 'inside\n')
  mkdirSync(join(workspace, 'sub'))
  write(join(workspace, 'sub', 'inner.txt'), 'inside\n')
  symlinkSync(join(outside, 'secret.txt'), join(workspace, 'link-out-file'))
  symlinkSync('../outside', join(workspace, 'link-out-dir'))
  symlinkSync('/', join(workspace, 'link-root'))
  symlinkSync('/proc/self/root', join(workspace, 'link-proc'))
  symlinkSync('../..', join(workspace, 'sub', 'link-up'))
  symlinkSync('../outside/not-yet.txt', join(workspace, 'dangling-out'))
  symlinkSync('chain2', join(workspace, 'chain1'))
  symlinkSync('link-out-file', join(workspace, 'chain2'))
}

type Case = [label: string, tool: string, args: (f: Folders) => Record<string, unknown>, code: string]

const secretAbs = (f: Folders) => join(f.outside, 'secret.txt')
const CASES: Case[] = [
  ['.. to a sibling', 'read', () => ({ path: '../outside/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['.. chain to /etc', 'read', () => ({ path: '../../../../../../etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['.. after a real folder', 'read', () => ({ path: 'sub/../../outside/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['./.. prefix', 'read', () => ({ path: './../outside/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['.. through missing folders', 'read', () => ({ path: 'a/b/../../../outside/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['absolute path outside', 'read', (f) => ({ path: secretAbs(f) }), 'PATH_OUTSIDE_WORKSPACE'],
  ['absolute /etc/passwd', 'read', () => ({ path: '/etc/passwd' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['/proc/self/root prefix', 'read', (f) => ({ path: `/proc/self/root${secretAbs(f)}` }), 'PATH_OUTSIDE_WORKSPACE'],
  ['/proc/self/cwd prefix', 'read', () => ({ path: '/proc/self/cwd/package.json' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['symlinked file', 'read', () => ({ path: 'link-out-file' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['symlinked parent folder', 'read', () => ({ path: 'link-out-dir/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['link to / then down', 'read', (f) => ({ path: `link-root${secretAbs(f)}` }), 'PATH_OUTSIDE_WORKSPACE'],
  ['link to /proc/self/root', 'read', (f) => ({ path: `link-proc${secretAbs(f)}` }), 'PATH_OUTSIDE_WORKSPACE'],
  ['link to .. inside a subfolder', 'read', () => ({ path: 'sub/link-up/outside/secret.txt' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['chain of links', 'read', () => ({ path: 'chain1' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['NUL byte cutting the path', 'read', () => ({ path: 'inside.txt\0../outside/secret.txt' }), 'INVALID_PATH'],
  ['NUL byte first', 'read', () => ({ path: '\0/etc/passwd' }), 'INVALID_PATH'],
  ['backslash separators', 'read', () => ({ path: '..\\outside\\secret.txt' }), 'INVALID_PATH'],
  ['two-dot leader U+2025', 'read', () => ({ path: '\u2025/outside/secret.txt' }), 'INVALID_PATH'],
  ['fullwidth full stops', 'read', () => ({ path: '\uFF0E\uFF0E/outside/secret.txt' }), 'INVALID_PATH'],
  ['division slash U+2215', 'read', () => ({ path: '..\u2215outside\u2215secret.txt' }), 'INVALID_PATH'],
  ['fullwidth solidus', 'read', () => ({ path: '..\uFF0Foutside\uFF0Fsecret.txt' }), 'INVALID_PATH'],
  ['a 300-byte name', 'read', () => ({ path: `${'a'.repeat(300)}/../../outside/secret.txt` }), 'INVALID_PATH'],
  ['a 5000-character path', 'read', () => ({ path: `${'a/'.repeat(2500)}x` }), 'INVALID_PATH'],
  ['~ is not expanded', 'read', () => ({ path: '~/.bashrc' }), 'FILE_NOT_FOUND'],
  ['write with ..', 'write', () => ({ path: '../outside/new.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write absolute outside', 'write', (f) => ({ path: join(f.outside, 'new.txt'), content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write into a symlinked folder', 'write', () => ({ path: 'link-out-dir/new.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write through a symlinked file', 'write', () => ({ path: 'link-out-file', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write through a dangling link out', 'write', () => ({ path: 'dangling-out', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write via /proc/self/root', 'write', (f) => ({ path: `/proc/self/root${f.outside}/new.txt`, content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write via a link to ..', 'write', () => ({ path: 'sub/link-up/outside/secret.txt', content: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['write with a NUL byte', 'write', () => ({ path: 'ok.txt\0../../outside/secret.txt', content: 'x' }), 'INVALID_PATH'],
  ['write a look-alike ..', 'write', () => ({ path: '\u2025/outside/new.txt', content: 'x' }), 'INVALID_PATH'],
  ['edit through a symlinked file', 'edit', () => ({ path: 'link-out-file', old_string: SECRET, new_string: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['edit through a chain of links', 'edit', () => ({ path: 'chain1', old_string: SECRET, new_string: 'x' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['multi_edit with ..', 'multi_edit', () => ({ path: '../outside/secret.txt', edits: [{ old_string: SECRET, new_string: 'x' }] }), 'PATH_OUTSIDE_WORKSPACE'],
  ['glob pattern with ..', 'glob', () => ({ pattern: '../outside/*' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['glob absolute pattern', 'glob', (f) => ({ pattern: `${f.outside}/*` }), 'PATH_OUTSIDE_WORKSPACE'],
  ['glob .. inside braces', 'glob', () => ({ pattern: '{..,sub}/outside/*' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['glob path outside', 'glob', () => ({ pattern: '*', path: '../outside' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['glob path through a link', 'glob', () => ({ pattern: '**', path: 'link-out-dir' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['grep path outside', 'grep', () => ({ pattern: SECRET, path: '../outside' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['grep a symlinked file', 'grep', () => ({ pattern: SECRET, path: 'link-out-file' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['grep a symlinked folder', 'grep', () => ({ pattern: SECRET, path: 'link-out-dir' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['grep glob with ..', 'grep', () => ({ pattern: SECRET, glob: '../outside/*' }), 'PATH_OUTSIDE_WORKSPACE'],
  ['grep via /proc/self/root', 'grep', (f) => ({ pattern: SECRET, path: `/proc/self/root${f.outside}` }), 'PATH_OUTSIDE_WORKSPACE'],
]

describe('the path-escape corpus', () => {
  it(`has at least 30 cases (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30)
  })

  it('names the workspace root right after the workspace, not after the link it went through', async () => {
    const f = folders()
    plant(f)
    const { call } = await boot(f)
    expect(text(await call('read', { path: 'link-out-file' }))).toBe(`Error: link-out-file leads outside the workspace (${f.workspace}) through a symbolic link; use a path inside it, relative to it or absolute`)
  })

  it('refuses every case with its code, reads nothing outside, and leaves the outside tree unchanged', async () => {
    const f = folders()
    plant(f)
    const before = fingerprint(f.outside)
    const { call } = await boot(f)
    const outcomes: string[] = []
    for (const [label, tool, args, code] of CASES) {
      const result = await call(tool, args(f))
      outcomes.push(`${label}: ${codeOf(result)}`)
      expect(`${label}: ${text(result)}`).not.toContain(SECRET)
      expect(`${label}: ${codeOf(result)}`).toBe(`${label}: ${code}`)
    }
    expect(outcomes).toHaveLength(CASES.length)
    expect(fingerprint(f.outside)).toEqual(before)
    expect(readFileSync(join(f.outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`)
  })

  it('never lists or searches through a link out of the workspace', async () => {
    const f = folders()
    plant(f)
    const { call } = await boot(f)
    const listed = await call('glob', { pattern: '**/*' })
    expect(listed).toMatchObject({ isError: false, value: { files: ['inside.txt', 'sub/inner.txt'] } })
    const searched = await call('grep', { pattern: 'SECRET' })
    expect(searched).toMatchObject({ isError: false, value: { matches: 0 } })
  })

  it('works inside a workspace whose root is itself reached through a link', async () => {
    const f = folders()
    plant(f)
    symlinkSync(f.workspace, join(f.base, 'ws-link'))
    const { call } = await boot(f)
    const root = join(f.base, 'ws-link')
    expect(text(await call('read', { path: 'inside.txt' }, { workspaceRoot: root }))).toBe('1\tinside')
    expect(text(await call('read', { path: join(f.workspace, 'inside.txt') }, { workspaceRoot: root }))).toBe('1\tinside')
    expect(codeOf(await call('read', { path: 'link-out-file' }, { workspaceRoot: root }))).toBe('PATH_OUTSIDE_WORKSPACE')
  })

  it('reads and writes by an absolute path through a link to the workspace, as a shell started in the link names it ($PWD)', async () => {
    const f = folders()
    plant(f)
    const logical = join(f.base, 'ws-link')
    symlinkSync(f.workspace, logical)
    // The shell's name for the folder rein started in; the run's root is the real folder (what
    // process.cwd() gives), and the model took the path from `pwd`.
    vi.stubEnv('PWD', logical)
    const { call } = await boot(f)
    expect(text(await call('read', { path: join(logical, 'inside.txt') }))).toBe('1\tinside')
    expect(await call('write', { path: join(logical, 'made.txt'), content: 'new\n' })).toMatchObject({ isError: false })
    expect(readFileSync(join(f.workspace, 'made.txt'), 'utf8')).toBe('new\n')
    // A link to outside stays outside, by whichever name.
    expect(codeOf(await call('read', { path: join(logical, 'link-out-file') }))).toBe('PATH_OUTSIDE_WORKSPACE')
    expect(codeOf(await call('read', { path: join(logical, 'link-out-dir', 'secret.txt') }))).toBe('PATH_OUTSIDE_WORKSPACE')
    // Any other path outside is refused by its name: nothing about it is looked up or told.
    expect(codeOf(await call('read', { path: join(f.base, 'outside', 'secret.txt', 'x') }))).toBe('PATH_OUTSIDE_WORKSPACE')
    vi.unstubAllEnvs()
  })
})

/** Patterns whose fixed start leads through a link: `[label, tool, args, files it may list or search]`. */
type ThroughLink = [label: string, tool: 'glob' | 'grep', args: Record<string, unknown>, inside: string[]]

const THROUGH_LINKS: ThroughLink[] = [
  ['glob link/*', 'glob', { pattern: 'link-out-dir/*' }, []],
  ['glob link/**', 'glob', { pattern: 'link-out-dir/**' }, []],
  ['glob link/etc/*', 'glob', { pattern: 'link-root/etc/*' }, []],
  ['glob link/etc/passwd', 'glob', { pattern: 'link-root/etc/passwd' }, []],
  ['glob a folder named through a link', 'glob', { pattern: 'link-out-dir/nested' }, []],
  ['glob a file named through a link', 'glob', { pattern: 'link-out-dir/nested/deep.txt' }, []],
  ['glob a link to /proc/self/root', 'glob', { pattern: 'link-proc/etc/host*' }, []],
  ['glob a link to .. in a subfolder', 'glob', { pattern: 'sub/link-up/outside/*' }, []],
  ['glob a link to .. below path', 'glob', { pattern: 'link-up/outside/**', path: 'sub' }, []],
  ['glob braces naming a link and a folder', 'glob', { pattern: '{link-out-dir,sub}/*' }, ['sub/inner.txt']],
  ['grep glob link/*', 'grep', { pattern: 'SECRET', glob: 'link-out-dir/*' }, []],
  ['grep glob link/**', 'grep', { pattern: 'SECRET', glob: 'link-out-dir/**' }, []],
  ['grep glob link/etc/passwd', 'grep', { pattern: 'root', glob: 'link-root/etc/passwd' }, []],
  ['grep glob link/etc/*', 'grep', { pattern: 'root', glob: 'link-root/etc/*' }, []],
  ['grep glob a link to /proc/self/root', 'grep', { pattern: '.', glob: 'link-proc/etc/hostname' }, []],
  ['grep glob a link to .. in a subfolder', 'grep', { pattern: 'SECRET', glob: 'sub/link-up/outside/secret.txt' }, []],
  ['grep glob braces naming a link and a folder', 'grep', { pattern: 'SECRET|inside', glob: '{link-out-dir,sub}/*' }, ['sub/inner.txt']],
]

describe('globs through a link out of the workspace', () => {
  it('neither lists, opens nor counts anything outside, for every pattern', async () => {
    const f = folders()
    plant(f)
    const before = fingerprint(f.outside)
    const { call } = await boot(f)
    const seen: Record<string, unknown> = {}
    const shown: string[] = []
    const wanted: Record<string, unknown> = {}
    for (const [label, tool, args, inside] of THROUGH_LINKS) {
      const result = await call(tool, args)
      shown.push(`${label}: ${text(result)}`)
      if (result.isError) seen[label] = result.error.code
      else if (tool === 'glob') {
        const { files, total } = result.value as { files: string[]; total: number }
        seen[label] = { files, total }
      } else {
        const { files, searched } = result.value as { files: { path: string }[]; searched: number }
        seen[label] = { files: files.map((file) => file.path), searched }
      }
      // Every file grep may see here matches, so `searched` counts exactly the files inside.
      wanted[label] = tool === 'glob' ? { files: inside, total: inside.length } : { files: inside, searched: inside.length }
    }
    expect(seen).toEqual(wanted)
    // What the files outside hold (the listings are compared above; the answers echo the patterns).
    for (const leak of [SECRET, 'root:x:']) expect(shown.join('\n')).not.toContain(leak)
    expect(fingerprint(f.outside)).toEqual(before)
  })

  it('does not count a file the check after opening finds outside the workspace', async () => {
    const f = folders()
    plant(f)
    // A file list a walk could only produce if a folder were swapped for a link while it ran.
    const files = [join(f.workspace, 'inside.txt'), join(f.workspace, 'link-out-dir', 'secret.txt')]
    const matcher = new Matcher(compilePattern('SECRET|inside'), { timeoutMs: 60_000 })
    const outcome = await searchFiles({ matcher, files, allowed: f.workspace, maxMatches: 10, lineChars: 200 })
    await matcher.close()
    expect(outcome).toEqual({ found: [{ file: files[0], matches: [{ line: 1, text: 'inside' }] }], truncated: false, searched: 1, binary: 0 })
  })
})

describe('a path swapped between the check and the write', () => {
  /** A read file, and a write whose hook swaps something in at `when`. */
  async function race(when: 'afterCheck' | 'beforeRename', swap: (f: Folders) => void, path = 'inside.txt') {
    const f = folders()
    plant(f)
    const before = fingerprint(f.outside)
    const { call } = await boot(f, { hooks: { [when]: () => swap(f) } })
    expect(codeOf(await call('read', { path }))).toBe('ok')
    const result = await call('edit', { path, old_string: 'inside', new_string: 'written' })
    expect(fingerprint(f.outside)).toEqual(before)
    return { f, result }
  }

  it('refuses when the file became a link to outside after the check', async () => {
    const { f, result } = await race('afterCheck', ({ workspace, outside }) => {
      unlinkSync(join(workspace, 'inside.txt'))
      symlinkSync(join(outside, 'secret.txt'), join(workspace, 'inside.txt'))
    })
    expect(result).toMatchObject({ isError: true, error: { code: 'PATH_OUTSIDE_WORKSPACE', message: 'inside.txt was replaced by a symbolic link while it was being written; nothing was written' } })
    expect(readFileSync(join(f.outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`)
  })

  it('refuses when the parent folder became a link to outside after the check', async () => {
    const { result } = await race('afterCheck', ({ workspace, outside }) => {
      renameSync(join(workspace, 'sub'), join(workspace, 'sub-moved'))
      symlinkSync(outside, join(workspace, 'sub'))
    }, 'sub/inner.txt')
    expect(result).toMatchObject({ isError: true, error: { code: 'PATH_OUTSIDE_WORKSPACE' } })
  })

  it('replaces, never follows, a link swapped in after the last check', async () => {
    const { f, result } = await race('beforeRename', ({ workspace, outside }) => {
      unlinkSync(join(workspace, 'inside.txt'))
      symlinkSync(join(outside, 'secret.txt'), join(workspace, 'inside.txt'))
    })
    // The rename put the new file where the link was; the link's target was never opened.
    expect(result.isError).toBe(false)
    expect(readFileSync(join(f.workspace, 'inside.txt'), 'utf8')).toBe('written\n')
    expect(readFileSync(join(f.outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`)
  })

  it('writes nothing outside when the parent folder became a link after the last check: the write lands in the folder it checked', async () => {
    const { f, result } = await race('beforeRename', ({ workspace, outside }) => {
      renameSync(join(workspace, 'sub'), join(workspace, 'sub-moved'))
      symlinkSync(outside, join(workspace, 'sub'))
    }, 'sub/inner.txt')
    // The folder was held open from its check: the rename happened in it, under its new name.
    expect(result.isError).toBe(false)
    expect(readFileSync(join(f.workspace, 'sub-moved', 'inner.txt'), 'utf8')).toContain('written')
  })

  it('does not lose a write another process made to the file between the check and the rename', async () => {
    const { f, result } = await race('afterCheck', ({ workspace }) => {
      write(join(workspace, 'inside.txt'), 'inside\nand a line someone else added\n')
    })
    expect(result).toMatchObject({ isError: true, error: { code: 'FILE_CHANGED_SINCE_READ', message: 'inside.txt was changed by something else while it was being written; nothing was written; read it again and retry' } })
    expect(readFileSync(join(f.workspace, 'inside.txt'), 'utf8')).toBe('inside\nand a line someone else added\n')
  })

  it('does not follow a file swapped for a link between its check and its open, on read', async () => {
    const f = folders()
    plant(f)
    // The check saw inside.txt; by the open it is a link to the secret.
    const resolved: Resolved = { absolute: join(f.workspace, 'inside.txt'), real: join(f.workspace, 'inside.txt'), display: 'inside.txt', exists: true, area: 'workspace', allowed: f.workspace }
    unlinkSync(join(f.workspace, 'inside.txt'))
    symlinkSync(join(f.outside, 'secret.txt'), join(f.workspace, 'inside.txt'))
    await expect(openRegularFile(resolved, f.workspace)).rejects.toMatchObject({ code: 'PATH_OUTSIDE_WORKSPACE' })
  })

  it('notices through /proc a file opened through a folder swapped for a link', async () => {
    const f = folders()
    plant(f)
    // What a check that ran before the swap would have allowed, opened after it.
    rmSync(join(f.workspace, 'sub'), { recursive: true })
    symlinkSync(join(f.outside, 'nested'), join(f.workspace, 'sub'))
    const resolved: Resolved = { absolute: join(f.workspace, 'sub', 'deep.txt'), real: join(f.workspace, 'sub', 'deep.txt'), display: 'sub/deep.txt', exists: true, area: 'workspace', allowed: f.workspace }
    await expect(openRegularFile(resolved, f.workspace)).rejects.toMatchObject({ code: 'PATH_OUTSIDE_WORKSPACE' })
  })
})
