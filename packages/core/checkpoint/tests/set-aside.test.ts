// Where rewind keeps what it will not delete: one folder per rewind, two files of one path both kept.
import { spawnSync } from 'node:child_process'
import { chmod, chown, link, lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { CheckpointService, MemoryCheckpointStore, type RewindResult } from '../src/index.ts'
import { discardCopy, keepCopy, setAside } from '../src/set-aside.ts'
import { tempRoot } from './harness.ts'

describe('set aside', () => {
  it('keeps two files of one path apart, even when the name already fills the 255-byte limit', async () => {
    for (const name of ['notes.txt', '記'.repeat(85)]) {
      const [first, second, folder] = [await tempRoot(), await tempRoot(), await tempRoot()]
      await writeFile(join(first, name), 'one')
      await writeFile(join(second, name), 'two')
      const kept = [await setAside(join(first, name), name, folder), (await keepCopy(join(second, name), name, folder))?.path]
      expect(kept[0]).not.toBe(kept[1])
      expect(await Promise.all(kept.map((file) => readFile(file ?? '', 'utf8')))).toEqual(['one', 'two'])
      expect(kept.every((file) => Buffer.byteLength(basename(file ?? '')) <= 255)).toBe(true)
    }
  })
})

/** Folders deep enough in a workspace that the path fits, and under a deep home's recovered folder is over PATH_MAX. */
async function deepWorkspace() {
  const [workspace, base] = [await tempRoot(), await tempRoot()]
  const home = join(base, 'h'.repeat(250), 'h'.repeat(250))
  const folders = Array.from({ length: Math.floor((4000 - workspace.length) / 251) }, () => 'd'.repeat(250)).join('/')
  await mkdir(join(workspace, folders), { recursive: true })
  const ctx = new Context()
  await ctx.plugin(CheckpointService, { home })
  ctx.checkpoints.registerStore(new MemoryCheckpointStore())
  return { workspace, home, folders, ctx }
}

describe('a file whose place under <home>/recovered would be too long a path', () => {
  it('is planned as not moved aside nor restored, as the rewind then leaves it, rather than promised', async () => {
    const { workspace, home, folders, ctx } = await deepWorkspace()
    const by = 'bash: make deep files'
    const [made, changed] = [`${folders}/made.txt`, `${folders}/changed.txt`]
    await writeFile(join(workspace, changed), 'old')
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: made, existed: false, before: null, after: Buffer.from('new'), by })
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: changed, existed: true, before: Buffer.from('old'), after: Buffer.from('changed'), by })
    await writeFile(join(workspace, made), 'new')
    await writeFile(join(workspace, changed), 'changed')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    const recovered = join(home, 'recovered')
    const said = [
      ['changed.txt', 'skipped', `cannot be restored: a copy of what it holds would not fit under ${recovered} (its path there too long for the system, ENAMETOOLONG); it stays as it is`],
      ['made.txt', 'skipped', `cannot be moved aside: its path under ${recovered} would be too long for the system (ENAMETOOLONG); it stays as it is`],
    ]
    expect(plan.items.map((item) => [basename(item.path), item.action, item.reason])).toEqual(said)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect({ restored: result.restored, failed: result.failed }).toEqual({ restored: [], failed: [] })
    expect(result.skipped.map((item) => [basename(item.path), item.action, item.reason])).toEqual(said)
    expect(await readFile(join(workspace, made), 'utf8')).toBe('new')
    expect(await readFile(join(workspace, changed), 'utf8')).toBe('changed')
  })
})

describe('a file a command deleted, under a path too long to keep a copy aside', () => {
  it('is planned and rewound as restored: with nothing at its path there is nothing to copy first', async () => {
    const { workspace, folders, ctx } = await deepWorkspace()
    const gone = `${folders}/gone.txt`
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: gone, existed: true, before: Buffer.from('precious'), after: null, by: 'bash: rm gone.txt' })
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [basename(item.path), item.action, item.reason])).toEqual([['gone.txt', 'restore', undefined]])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect({ skipped: result.skipped, failed: result.failed, restored: result.restored.length }).toEqual({ skipped: [], failed: [], restored: 1 })
    expect(await readFile(join(workspace, gone), 'utf8')).toBe('precious')
  })
})

describe('what a rewind keeps under <home>/recovered', () => {
  const modeOf = async (file: string) => (await lstat(file)).mode & 0o7777

  it('is 0600, whatever mode the file had in the workspace (a moved-aside 0644 file, a copied 0777 one)', async () => {
    const [workspace, folder] = [await tempRoot(), await tempRoot()]
    for (const [name, mode] of [['made.txt', 0o644], ['open.txt', 0o777], ['tool', 0o4755]] as const) {
      await writeFile(join(workspace, name), 'secret')
      await chmod(join(workspace, name), mode)
    }
    const moved = [await setAside(join(workspace, 'made.txt'), 'made.txt', folder), await setAside(join(workspace, 'tool'), 'tool', folder)]
    const copied = await keepCopy(join(workspace, 'open.txt'), 'open.txt', folder)
    expect(await Promise.all([...moved, copied?.path ?? ''].map(modeOf))).toEqual([0o600, 0o600, 0o600])
    // The workspace's own file, copied, keeps its mode.
    expect(await modeOf(join(workspace, 'open.txt'))).toBe(0o777)
  })

  it('leaves the mode of a file the moved-aside name was a hard link to, as narrowing it would change that file too', async () => {
    const [workspace, folder, elsewhere] = [await tempRoot(), await tempRoot(), await tempRoot()]
    await writeFile(join(elsewhere, 'notes.txt'), 'mine')
    await chmod(join(elsewhere, 'notes.txt'), 0o644)
    await link(join(elsewhere, 'notes.txt'), join(workspace, 'notes.txt'))
    const moved = await setAside(join(workspace, 'notes.txt'), 'notes.txt', folder)
    expect(await modeOf(join(elsewhere, 'notes.txt'))).toBe(0o644)
    expect(await modeOf(moved)).toBe(0o600)
    expect(await readFile(moved, 'utf8')).toBe('mine')
  })
})

// It makes another user's file (chown) and drops root's powers (setpriv): only as root.
describe.skipIf(process.getuid?.() !== 0)('another user\'s file, moved aside by a rewind not run as root', () => {
  it('is moved, though it may be neither read nor chmodded, and keeps its owner\'s mode', async () => {
    const [workspace, folder] = [await tempRoot(), await tempRoot()]
    const file = join(workspace, 'theirs.txt')
    await writeFile(file, 'theirs')
    await chmod(file, 0o640)
    await chown(file, 65534, 65534)
    const child = spawnSync('setpriv', [
      '--inh-caps=-all', '--bounding-set=-all',
      process.execPath, '--conditions=@rein/source', '--import', 'tsx', fileURLToPath(new URL('./fixtures/set-aside-as-user.ts', import.meta.url)),
      JSON.stringify({ file, path: 'theirs.txt', folder }),
    ], { cwd: fileURLToPath(new URL('../../../../', import.meta.url)), encoding: 'utf8' })
    expect(JSON.parse(child.stdout)).toEqual({ movedTo: join(folder, 'theirs.txt') })
    expect(await readFile(join(folder, 'theirs.txt'), 'utf8')).toBe('theirs')
    expect((await lstat(join(folder, 'theirs.txt'))).mode & 0o7777).toBe(0o640)
  })
})

/** Every folder under `top` with nothing in it (`top` too), relative to `top`'s parent. */
async function emptyFolders(top: string): Promise<string[]> {
  const entries = await readdir(top, { withFileTypes: true }).catch(() => undefined)
  if (entries === undefined) return []
  if (entries.length === 0) return [basename(top)]
  const below = await Promise.all(entries.filter((entry) => entry.isDirectory()).map((entry) => emptyFolders(join(top, entry.name))))
  return below.flat().map((path) => join(basename(top), path))
}

describe('a move aside that fails', () => {
  it('leaves no empty folders under recovered/ when the file went before it could be moved', async () => {
    const [workspace, home] = [await tempRoot(), await tempRoot()]
    const folder = join(home, 'recovered', 's1', 'time')
    await expect(setAside(join(workspace, 'deep/er/gone.txt'), 'deep/er/gone.txt', folder)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await readdir(home)).toEqual([])
  })

  it('removes only the folders it made: one that holds an earlier file moved aside stays', async () => {
    const [workspace, home] = [await tempRoot(), await tempRoot()]
    const folder = join(home, 'recovered', 's1', 'time')
    await mkdir(join(workspace, 'deep'))
    await writeFile(join(workspace, 'deep/kept.txt'), 'kept')
    await setAside(join(workspace, 'deep/kept.txt'), 'deep/kept.txt', folder)
    await expect(setAside(join(workspace, 'deep/er/gone.txt'), 'deep/er/gone.txt', folder)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await readdir(join(folder, 'deep'))).toEqual(['kept.txt'])
  })
})

// Drops root's powers (setpriv), so a read-only folder refuses the move as it would any user: only as root.
describe.skipIf(process.getuid?.() !== 0)('a rewind whose move aside the system refuses', () => {
  /** Runs `commands` under snapshots, then a rewind, in a child without root's powers; resolves with the rewind's result. */
  async function rewoundAsUser(workspace: string, home: string, commands: string[]): Promise<RewindResult> {
    const child = spawnSync('setpriv', [
      '--inh-caps=-all', '--bounding-set=-all',
      process.execPath, '--conditions=@rein/source', '--import', 'tsx', fileURLToPath(new URL('./fixtures/commands-as-user.ts', import.meta.url)),
      JSON.stringify({ workspace, home, commands }),
    ], { cwd: fileURLToPath(new URL('../../../../', import.meta.url)), encoding: 'utf8' })
    if (child.status !== 0) throw new Error(`the child failed (${child.status}): ${child.stderr}`)
    return (JSON.parse(child.stdout) as { result: RewindResult }).result
  }

  it('reports the file failed and leaves no empty folders under <home>/recovered', async () => {
    const [workspace, home] = [await tempRoot(), await tempRoot()]
    const result = await rewoundAsUser(workspace, home, ['true', 'mkdir -p gen/deep && echo x > gen/deep/made.txt && chmod 555 gen/deep'])
    expect(result.failed.map((item) => [item.path, item.error.includes('EACCES')])).toEqual([['gen/deep/made.txt', true]])
    expect(await readFile(join(workspace, 'gen/deep/made.txt'), 'utf8')).toBe('x\n')
    expect(await emptyFolders(join(home, 'recovered'))).toEqual([])
  })

  it('leaves no empty folders under <home>/recovered when a restore fails after a copy of the file was kept there', async () => {
    const [workspace, home] = [await tempRoot(), await tempRoot()]
    await mkdir(join(workspace, 'sub'))
    await writeFile(join(workspace, 'sub/f.txt'), 'old\n')
    const result = await rewoundAsUser(workspace, home, ['true', 'echo new > sub/f.txt && chmod 555 sub'])
    expect(result.failed.map((item) => [item.path, item.error.includes('EACCES')])).toEqual([['sub/f.txt', true]])
    expect(await readFile(join(workspace, 'sub/f.txt'), 'utf8')).toBe('new\n')
    expect(await emptyFolders(join(home, 'recovered'))).toEqual([])
  })
})

describe('a copy kept before a restore, discarded when the restore fails', () => {
  it('takes back only the folders made for it: <home>/recovered and a session folder that were there already stay', async () => {
    const [workspace, home] = [await tempRoot(), await tempRoot()]
    await mkdir(join(home, 'recovered', 's1'), { recursive: true })
    await mkdir(join(workspace, 'sub'))
    await writeFile(join(workspace, 'sub/f.txt'), 'mine')
    const kept = await keepCopy(join(workspace, 'sub/f.txt'), 'sub/f.txt', join(home, 'recovered', 's1', 'time'))
    await discardCopy(kept!)
    expect(await readdir(home)).toEqual(['recovered'])
    expect(await readdir(join(home, 'recovered'))).toEqual(['s1'])
    expect(await readdir(join(home, 'recovered', 's1'))).toEqual([])
    expect(await readFile(join(workspace, 'sub/f.txt'), 'utf8')).toBe('mine')
  })
})

// Drops root's powers (setpriv), so a read-only folder keeps the name from being removed: only as root.
describe.skipIf(process.getuid?.() !== 0)('a hard-linked file whose name cannot be removed once it is copied aside', () => {
  it('leaves no copy of it (it may be a secret) nor any folder under <home>/recovered, and the file as it was', async () => {
    const [workspace, home, elsewhere] = [await tempRoot(), await tempRoot(), await tempRoot()]
    await writeFile(join(elsewhere, 'secret.txt'), 'secret')
    await mkdir(join(workspace, 'locked'))
    await link(join(elsewhere, 'secret.txt'), join(workspace, 'locked/secret.txt'))
    await chmod(join(workspace, 'locked'), 0o555)
    const child = spawnSync('setpriv', [
      '--inh-caps=-all', '--bounding-set=-all',
      process.execPath, '--conditions=@rein/source', '--import', 'tsx', fileURLToPath(new URL('./fixtures/set-aside-as-user.ts', import.meta.url)),
      JSON.stringify({ file: join(workspace, 'locked/secret.txt'), path: 'locked/secret.txt', folder: join(home, 'recovered', 's1', 'time') }),
    ], { cwd: fileURLToPath(new URL('../../../../', import.meta.url)), encoding: 'utf8' })
    expect(JSON.parse(child.stdout)).toEqual({ error: 'EACCES' })
    expect(await readdir(home)).toEqual([])
    expect(await readFile(join(workspace, 'locked/secret.txt'), 'utf8')).toBe('secret')
    expect((await lstat(join(elsewhere, 'secret.txt'))).nlink).toBe(2)
  })
})
