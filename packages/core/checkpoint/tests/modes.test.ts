// A file rewind must create again (the turn deleted it) gets back the permission bits it had: a
// 0600 secret must not come back readable by all, a 0755 script must stay executable.
import { chmod, lstat, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, onTestFinished } from 'vitest'
import { MemoryCheckpointStore } from '../src/index.ts'
import { writeAtomically } from '../src/restore.ts'
import { setup, tempRoot, text } from './harness.ts'

const modeOf = async (file: string) => (await stat(file)).mode & 0o7777

/** Writes `path` with `mode` (chmod: the umask does not apply). */
async function place(workspace: string, path: string, content: string, mode: number) {
  const file = join(workspace, path)
  await mkdir(join(file, '..'), { recursive: true })
  await writeFile(file, content)
  await chmod(file, mode)
}

describe('permission bits through rewind', () => {
  it('brings a deleted 0600 file and a deleted 0755 file back with their modes (rm secrets.json run.sh)', async () => {
    const { ctx, workspace } = await setup(new MemoryCheckpointStore())
    await place(workspace, 'secrets.json', '{"token":"x"}', 0o600)
    await place(workspace, 'run.sh', '#!/bin/sh\necho hi\n', 0o755)
    for (const path of ['secrets.json', 'run.sh']) {
      const file = join(workspace, path)
      const before = await readFile(file)
      await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path, existed: true, before, after: null, mode: (await lstat(file)).mode & 0o7777 })
      await rm(file)
    }
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed).toEqual([])
    expect(await text(join(workspace, 'secrets.json'))).toBe('{"token":"x"}')
    expect(await modeOf(join(workspace, 'secrets.json'))).toBe(0o600)
    expect(await modeOf(join(workspace, 'run.sh'))).toBe(0o755)
  })

  it('keeps the mode in the records of MemoryCheckpointStore, and leaves it out when not given', async () => {
    const store = new MemoryCheckpointStore()
    const content = Buffer.from('x')
    const kept = await store.append('s1', { anchor: 't1', root: '/w', path: 'a', existed: true, before: content, after: null, mode: 0o640 })
    const without = await store.append('s1', { anchor: 't1', root: '/w', path: 'b', existed: true, before: content, after: null })
    expect(kept.mode).toBe(0o640)
    expect('mode' in without).toBe(false)
    expect((await store.records('s1')).map((record) => record.mode)).toEqual([0o640, undefined])
  })

  it('restores a file whose folder the turn removed (rm -rf dir), folder and all', async () => {
    const umask = process.umask(0o022)
    onTestFinished(() => void process.umask(umask))
    const { ctx, workspace } = await setup()
    await place(workspace, 'dir/sub/key.pem', 'secret', 0o600)
    const file = join(workspace, 'dir/sub/key.pem')
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'dir/sub/key.pem', existed: true, before: await readFile(file), after: null, mode: 0o600 })
    await rm(join(workspace, 'dir'), { recursive: true })
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed).toEqual([])
    expect(result.restored.map((item) => item.path)).toEqual(['dir/sub/key.pem'])
    expect(await text(file)).toBe('secret')
    expect(await modeOf(file)).toBe(0o600)
    // Nothing recorded what the folders were: they come back as mkdir -p makes them, the file private by its own mode.
    expect(await modeOf(join(workspace, 'dir'))).toBe(0o755)
  })

  it('refuses a mode that is not permission bits with INVALID_CHECKPOINT', async () => {
    const { ctx, workspace } = await setup()
    for (const mode of [-1, 0o10000, 1.5, Number.NaN, '644' as unknown as number]) {
      await expect(ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'a', existed: false, before: null, after: Buffer.from('x'), mode }))
        .rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
    }
    await expect(ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'a', existed: true, before: Buffer.from('x'), after: null, mode: 0o7777 })).resolves.toMatchObject({ mode: 0o7777 })
  })
})

describe('writeAtomically', () => {
  it('creates a missing file with the mode it is given', async () => {
    const root = await tempRoot()
    await writeAtomically(join(root, 'run.sh'), Buffer.from('#!/bin/sh\n'), 0o755)
    await writeAtomically(join(root, 'secret'), Buffer.from('s'), 0o600)
    expect(await modeOf(join(root, 'run.sh'))).toBe(0o755)
    expect(await modeOf(join(root, 'secret'))).toBe(0o600)
  })

  it('creates a missing file 0600 when its mode is unknown (its content may be a secret)', async () => {
    const root = await tempRoot()
    await writeAtomically(join(root, 'unknown'), Buffer.from('s'))
    expect(await modeOf(join(root, 'unknown'))).toBe(0o600)
  })

  it('keeps the mode of a file that exists, whatever mode it is given', async () => {
    const root = await tempRoot()
    await place(root, 'a.txt', 'old', 0o640)
    await writeAtomically(join(root, 'a.txt'), Buffer.from('new'), 0o600)
    expect(await text(join(root, 'a.txt'))).toBe('new')
    expect(await modeOf(join(root, 'a.txt'))).toBe(0o640)
  })

  it('creates missing parent folders as mkdir -p does (0777 less the umask), leaving no temp file behind', async () => {
    const root = await tempRoot()
    const umask = process.umask(0o027)
    onTestFinished(() => void process.umask(umask))
    await writeAtomically(join(root, 'x/y/z.txt'), Buffer.from('z'), 0o644)
    expect(await text(join(root, 'x/y/z.txt'))).toBe('z')
    expect(await modeOf(join(root, 'x/y/z.txt'))).toBe(0o644)
    for (const folder of ['x', 'x/y']) expect(await modeOf(join(root, folder))).toBe(0o750)
    expect(await readdir(join(root, 'x/y'))).toEqual(['z.txt'])
  })
})
