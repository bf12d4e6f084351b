// Records keep how many parent folders a write made (mkdir -p), and which empty folders a command
// made (folder: true), so a rewind can remove them again: both survive the log, a reopen and a
// compaction; lines written before them still load.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { LOG_FILE } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

const open = async (base: string) => (await openStore({}, base)).store

function created(path: string, createdFolders?: number): CheckpointEntry {
  return { anchor: 't1', root: '/w', path, existed: false, before: null, after: Buffer.from(path), ...(createdFolders === undefined ? {} : { createdFolders }) }
}

/** A checkpoint service over a store opened on `sessions`, as a new process composes one. */
async function composeOver(sessions: string) {
  const ctx = new Context()
  await ctx.plugin(CheckpointService, {})
  const store = await open(sessions)
  ctx.checkpoints.registerStore(store)
  return { ctx, store }
}

describe('JsonlCheckpointStore and the folders a write made', () => {
  it('round-trips createdFolders through the log, across a reopen and a compaction', async () => {
    const base = await tempRoot()
    const store = await open(base)
    await store.append('s1', created('a/b/c.ts', 2))
    await store.append('s1', created('plain.ts'))
    await store.close()
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => line.createdFolders)).toEqual([2, undefined])
    expect('createdFolders' in lines[1]).toBe(false)
    const again = await open(base)
    expect((await again.records('s1')).map((record) => record.createdFolders)).toEqual([2, undefined])
    await again.append('s1', { ...created('x/y.ts', 1), anchor: 't2' })
    await again.compact('s1', new Set(['t1']), { seenThrough: 2 })
    await again.close()
    const compacted = await open(base)
    expect((await compacted.records('s1')).map((record) => [record.path, record.createdFolders])).toEqual([['a/b/c.ts', 2], ['plain.ts', undefined], ['x/y.ts', 1]])
  })

  it('still reads lines written before records kept createdFolders', async () => {
    const base = await tempRoot()
    await mkdir(join(base, 's1'), { recursive: true })
    const old = { anchor: 't1', seq: 1, root: '/w', path: 'a/b.ts', existed: false, before: null, after: contentHash(Buffer.from('a')), at: 1 }
    await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify(old)}\n`)
    const store = await open(base)
    const [record] = await store.records('s1')
    expect(record).toEqual(old)
    expect(record && 'createdFolders' in record).toBe(false)
    expect((await store.append('s1', created('c/d.ts', 1))).createdFolders).toBe(1)
  })

  it('refuses a line whose createdFolders is not a positive count as damage', async () => {
    for (const createdFolders of [0, -1, 1.5, '2', null]) {
      const base = await tempRoot()
      await mkdir(join(base, 's1'), { recursive: true })
      const bad = { anchor: 't1', seq: 1, root: '/w', path: 'a/b.ts', existed: false, before: null, after: contentHash(Buffer.from('a')), at: 1, createdFolders }
      const good = { ...bad, seq: 2, createdFolders: 1 }
      await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify(bad)}\n${JSON.stringify(good)}\n`)
      await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    }
  })

  it('round-trips a record of a folder a command made (folder: true) through the log, a reopen and a compaction', async () => {
    const base = await tempRoot()
    const store = await open(base)
    const folder: CheckpointEntry = { anchor: 't1', root: '/w', path: 'build/out', folder: true, existed: false, before: null, after: null, createdFolders: 1, by: 'bash: mkdir -p build/out' }
    await store.append('s1', folder)
    await store.append('s1', created('plain.ts'))
    await store.close()
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => line.folder)).toEqual([true, undefined])
    expect('folder' in lines[1]).toBe(false)
    const again = await open(base)
    expect((await again.records('s1')).map((record) => [record.path, record.folder, record.createdFolders])).toEqual([['build/out', true, 1], ['plain.ts', undefined, undefined]])
    await again.append('s1', { ...created('x.ts'), anchor: 't2' })
    await again.compact('s1', new Set(['t1']))
    await again.close()
    expect((await (await open(base)).records('s1')).map((record) => [record.path, record.folder])).toEqual([['build/out', true], ['plain.ts', undefined]])
  })

  it('refuses a line whose folder is not true, or a folder line with contents or that existed, as damage', async () => {
    const folder = { anchor: 't1', seq: 1, root: '/w', path: 'out', folder: true, existed: false, before: null, after: null, at: 1 }
    for (const bad of [{ folder: false }, { folder: 'yes' }, { after: contentHash(Buffer.from('a')) }, { existed: true }, { mode: 0o755 }]) {
      const base = await tempRoot()
      await mkdir(join(base, 's1'), { recursive: true })
      await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify({ ...folder, ...bad })}\n${JSON.stringify({ ...folder, seq: 2 })}\n`)
      await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    }
  })

  it('rewind removes an empty folder a command made, from a log reopened in a new store', async () => {
    const base = await tempRoot()
    const workspace = join(base, 'workspace')
    await mkdir(join(workspace, 'build/out'), { recursive: true })
    const compose = () => composeOver(join(base, 'sessions'))
    const first = await compose()
    await first.ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'build/out', folder: true, existed: false, before: null, after: null, createdFolders: 1 })
    await first.store.close()
    const result = await (await compose()).ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => [item.path, item.folders?.map((folder) => folder.path)])).toEqual([['build/out', ['build/out', 'build']]])
    expect(await readdir(workspace)).toEqual([])
  })

  it('rewind removes the folders a write created, from a log reopened in a new store', async () => {
    const base = await tempRoot()
    const workspace = join(base, 'workspace')
    await mkdir(workspace)
    const compose = () => composeOver(join(base, 'sessions'))
    const first = await compose()
    await first.ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'new/deep/a.ts', existed: false, before: null, after: Buffer.from('a'), createdFolders: 2 })
    await mkdir(dirname(join(workspace, 'new/deep/a.ts')), { recursive: true })
    await writeFile(join(workspace, 'new/deep/a.ts'), 'a')
    await first.store.close()
    const result = await (await compose()).ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => item.folders?.map((folder) => [folder.path, folder.action]))).toEqual([[['new/deep', 'remove'], ['new', 'remove']]])
    expect(await readdir(workspace)).toEqual([])
  })
})
