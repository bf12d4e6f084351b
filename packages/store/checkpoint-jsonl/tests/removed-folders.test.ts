// An empty folder a command removed (a `folder` record that `existed`, with its mode) survives the
// log, a reopen and a compaction, and a rewind from a reopened log makes it again. Its line reads,
// to a build from before such records, as a change it cannot restore (a gap): reported, never damage;
// and once such a build compacted the log (dropping the field), this one still reads the folder.
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, contentHash, type CheckpointEntry, type CheckpointRecord } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { LOG_FILE } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

const open = async (base: string) => (await openStore({}, base)).store

const REMOVED: CheckpointEntry = { anchor: 't1', root: '/w', path: 'old', folder: true, existed: true, before: null, after: null, mode: 0o751, by: 'bash: rmdir old' }

async function logLines(base: string): Promise<Record<string, unknown>[]> {
  return (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** A workspace, and ctx.checkpoints over a log in `sessions` beside it, composed afresh on each call (a new process would). */
async function workspaceAndLog() {
  const base = await tempRoot()
  const workspace = join(base, 'workspace')
  await mkdir(workspace)
  const compose = async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    const store = await open(join(base, 'sessions'))
    ctx.checkpoints.registerStore(store)
    return { ctx, store }
  }
  return { base, workspace, compose }
}

describe('JsonlCheckpointStore and the empty folders a command removed', () => {
  it('round-trips an empty folder a command removed through the log, a reopen and a compaction', async () => {
    const base = await tempRoot()
    const store = await open(base)
    expect(await store.append('s1', REMOVED)).toMatchObject({ path: 'old', folder: true, existed: true, mode: 0o751 })
    await store.append('s1', { ...REMOVED, path: 'made', existed: false, mode: undefined })
    await store.close()
    const again = await open(base)
    const records = async (from: typeof again) => (await from.records('s1')).map((record) => [record.path, record.folder, record.existed, record.mode, record.gap])
    expect(await records(again)).toEqual([['old', true, true, 0o751, undefined], ['made', true, false, undefined, undefined]])
    await again.append('s1', { ...REMOVED, anchor: 't2', path: 'other' })
    await again.compact('s1', new Set(['t1']))
    await again.close()
    expect(await records(await open(base))).toEqual([['old', true, true, 0o751, undefined], ['made', true, false, undefined, undefined]])
  })

  it('writes its line so that a build that does not know it reads a change it cannot restore, and says so', async () => {
    const base = await tempRoot()
    const store = await open(base)
    await store.append('s1', REMOVED)
    await store.close()
    const [line] = await logLines(base)
    // No `folder` (a build that knows it refuses a folder line that existed) and a gap a build that knows nothing of it reports.
    expect(line).toMatchObject({ path: 'old', existed: true, before: null, after: null, mode: 0o751, removedFolder: true, gap: expect.stringContaining('an empty folder') })
    expect('folder' in line!).toBe(false)
    // What such a build reads: the line without the field it does not know (this build reads that as the folder again, so the older store is stood in for).
    const { removedFolder: _unknown, ...older } = line!
    const workspace = join(base, 'workspace')
    await mkdir(workspace)
    const record = { ...older, root: workspace } as unknown as CheckpointRecord
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    ctx.checkpoints.registerStore({ append: () => Promise.reject(new Error('read only')), records: () => Promise.resolve([record]), blob: () => Promise.reject(new Error('no contents')) })
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([['old', 'skipped', `not restored: ${String(line!.gap)}`]])
  })

  it('still makes again an empty folder whose line an older build compacted (removedFolder dropped), and rewinds the file at its path', async () => {
    const { base, workspace, compose } = await workspaceAndLog()
    // `rmdir out && echo x > out`: the folder removed, a file put where it was.
    const first = await compose()
    await first.ctx.checkpoints.record('s1', { ...REMOVED, root: workspace, path: 'out', by: 'bash: rmdir out && echo x > out' })
    await first.ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'out', existed: false, before: null, after: Buffer.from('x') })
    await first.store.close()
    await writeFile(join(workspace, 'out'), 'x')
    // What an older build's compaction writes back: each line without the field it does not know.
    const file = join(base, 'sessions', 's1', LOG_FILE)
    const lines = await logLines(join(base, 'sessions'))
    expect(lines.filter((line) => line.removedFolder === true)).toHaveLength(1)
    await writeFile(file, lines.map(({ removedFolder: _dropped, ...line }) => `${JSON.stringify(line)}\n`).join(''))
    const { ctx } = await compose()
    expect((await ctx.checkpoints.records('s1')).map((record) => [record.path, record.folder, record.existed, record.mode, record.gap])).toEqual([
      ['out', true, true, 0o751, undefined], ['out', undefined, false, undefined, undefined],
    ])
    const result = await ctx.checkpoints.rewind('s1', 't1', { notify: false })
    expect(result.restored.map((item) => [item.path, item.folder ?? false])).toEqual([['out', false], ['out', true]])
    expect((await stat(join(workspace, 'out'))).isDirectory()).toBe(true)
  })

  it('refuses a line whose removedFolder is not true, or that has contents, did not exist or says folder too, as damage', async () => {
    const removed = { anchor: 't1', seq: 1, root: '/w', path: 'old', existed: true, before: null, after: null, at: 1, gap: 'an empty folder', removedFolder: true }
    for (const bad of [{ removedFolder: false }, { removedFolder: 'yes' }, { before: contentHash(Buffer.from('a')) }, { existed: false }, { folder: true }, { createdFolders: 1 }]) {
      const base = await tempRoot()
      await mkdir(join(base, 's1'), { recursive: true })
      await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify({ ...removed, ...bad })}\n${JSON.stringify({ ...removed, seq: 2 })}\n`)
      await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    }
  })

  it('rewind makes an empty folder a command removed again, with its mode, from a log reopened in a new store', async () => {
    const { workspace, compose } = await workspaceAndLog()
    const first = await compose()
    await first.ctx.checkpoints.record('s1', { ...REMOVED, root: workspace, path: 'gone/old' })
    await first.store.close()
    const result = await (await compose()).ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => [item.path, item.existed])).toEqual([['gone/old', true]])
    expect(await readdir(join(workspace, 'gone'))).toEqual(['old'])
    expect((await stat(join(workspace, 'gone/old'))).mode & 0o7777).toBe(0o751)
  })
})
