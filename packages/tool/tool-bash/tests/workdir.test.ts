// `workdir` escapes: every way out of the workspace is refused before the command runs, and
// nothing outside is written — checked by listing and hashing the outside tree.
import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'

let base: string
let ws: string
let outside: string

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'rein-workdir-')))
  ws = join(base, 'ws')
  outside = join(base, 'outside')
  mkdirSync(join(ws, 'sub', 'deep'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.txt'), 'secret')
  writeFileSync(join(ws, 'file.txt'), 'inside')
  symlinkSync(outside, join(ws, 'link-out'))
  symlinkSync(base, join(ws, 'link-parent'))
  symlinkSync(join(ws, 'sub'), join(ws, 'link-in'))
  symlinkSync(join(ws, 'link-out'), join(ws, 'link-chain'))
  symlinkSync('/', join(ws, 'sub', 'root-link'))
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Every path under `root` (symlinks listed, never followed) with a hash of each file: any write shows up. */
function snapshot(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      const stat = lstatSync(path)
      if (stat.isDirectory()) walk(path)
      const kind = stat.isFile() ? createHash('sha256').update(readFileSync(path)).digest('hex') : stat.isSymbolicLink() ? 'link' : 'dir'
      found.push(`${relative(root, path)} ${kind}`)
    }
  }
  walk(root)
  return found
}

const ESCAPES: [string, () => string, string][] = [
  ['the parent', () => '..', 'PATH_OUTSIDE_WORKSPACE'],
  ['a .. chain', () => '../../..', 'PATH_OUTSIDE_WORKSPACE'],
  ['a .. chain into a sibling', () => '../outside', 'PATH_OUTSIDE_WORKSPACE'],
  ['.. after a real folder', () => 'sub/../../outside', 'PATH_OUTSIDE_WORKSPACE'],
  ['.. deep inside then out', () => 'sub/deep/../../../outside', 'PATH_OUTSIDE_WORKSPACE'],
  ['an absolute path outside', () => outside, 'PATH_OUTSIDE_WORKSPACE'],
  ['the filesystem root', () => '/', 'PATH_OUTSIDE_WORKSPACE'],
  ['/etc', () => '/etc', 'PATH_OUTSIDE_WORKSPACE'],
  ['the root with .. appended', () => `${ws}/..`, 'PATH_OUTSIDE_WORKSPACE'],
  ['a sibling sharing the root\'s prefix', () => `${ws}-other`, 'PATH_OUTSIDE_WORKSPACE'],
  ['a symlink to a folder outside', () => 'link-out', 'PATH_OUTSIDE_WORKSPACE'],
  ['a symlinked parent', () => 'link-parent/outside', 'PATH_OUTSIDE_WORKSPACE'],
  ['a chain of symlinks', () => 'link-chain', 'PATH_OUTSIDE_WORKSPACE'],
  ['a symlink to / deeper inside', () => 'sub/root-link/etc', 'PATH_OUTSIDE_WORKSPACE'],
  ['/proc/self/root', () => `/proc/self/root${ws}`, 'PATH_OUTSIDE_WORKSPACE'],
  ['/proc/self/cwd', () => '/proc/self/cwd', 'PATH_OUTSIDE_WORKSPACE'],
  ['a NUL byte', () => 'sub\0/../../outside', 'INVALID_WORKDIR'],
  ['only spaces', () => '   ', 'INVALID_WORKDIR'],
  ['a name longer than the file system allows', () => 'a'.repeat(300), 'INVALID_WORKDIR'],
  ['a Unicode look-alike of the root\'s name', () => join(base, 'w\u0455'), 'PATH_OUTSIDE_WORKSPACE'],
  ['a fullwidth-dot look-alike of ..', () => '\uff0e\uff0e/outside', 'WORKDIR_NOT_FOUND'],
  ['a division-slash look-alike of /', () => '..\u2215outside', 'WORKDIR_NOT_FOUND'],
  ['a tilde (not expanded)', () => '~', 'WORKDIR_NOT_FOUND'],
  ['a file, not a folder', () => 'file.txt', 'NOT_A_DIRECTORY'],
  ['a path through a file', () => 'file.txt/x', 'NOT_A_DIRECTORY'],
]

describe('workdir', () => {
  it.each(ESCAPES)('refuses %s and runs nothing', async (_name, workdir, code) => {
    const before = snapshot(base)
    const { execute } = await bootBash()
    const result = await execute({ command: 'touch escaped.txt; echo ran', description: 'Try to escape', workdir: workdir() }, undefined, { cwd: ws, workspaceRoot: ws })
    expect(result.isError && result.error.code).toBe(code)
    expect(snapshot(base)).toEqual(before)
  })

  it('names a long workdir shortened in its error, whatever the error', async () => {
    const { execute } = await bootBash()
    for (const workdir of [`missing/${'d'.repeat(500_000)}`, `${'a/'.repeat(200)}${'x'.repeat(300)}`, `/elsewhere/${'o'.repeat(10_000)}`]) {
      const result = await execute({ command: 'echo ran', description: 'Run somewhere', workdir }, undefined, { cwd: ws, workspaceRoot: ws })
      expect(result.isError).toBe(true)
      expect(result.isError && result.error.message.length).toBeLessThan(1_000)
    }
  })

  it.each([
    ['a folder inside', 'sub', 'sub'],
    ['./ and .. that stay inside', './sub/deep/..', 'sub'],
    ['an absolute path inside', 'ABS', 'sub/deep'],
    ['a symlink that stays inside', 'link-in', 'sub'],
    ['the root itself', '.', ''],
  ])('runs in %s, at its real path', async (_name, workdir, expected) => {
    const { execute } = await bootBash()
    const given = workdir === 'ABS' ? join(ws, 'sub', 'deep') : workdir
    const result = await execute({ command: 'pwd', description: 'Where am I', workdir: given }, undefined, { cwd: ws, workspaceRoot: ws })
    expect(text(result)).toBe(`${join(ws, expected).replace(/\/$/, '')}\n[exit code: 0]`)
  })

  it('resolves a relative workdir against the call\'s cwd, not the root', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'pwd', description: 'Where am I', workdir: 'deep' }, undefined, { cwd: join(ws, 'sub'), workspaceRoot: ws })
    expect(text(result)).toBe(`${join(ws, 'sub', 'deep')}\n[exit code: 0]`)
  })
})
