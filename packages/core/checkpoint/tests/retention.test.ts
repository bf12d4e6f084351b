import { describe, expect, it } from 'vitest'
import { Context, Logger, type Exporter, type Message } from '@deepseek-ai/cordis'
import { CheckpointService, MemoryCheckpointStore, contentHash, type CheckpointRecord, type CheckpointStore } from '../src/index.ts'
import { planRetention, type RetentionPolicy } from '../src/retention.ts'

const DAY = 24 * 60 * 60 * 1000
const NOW = Date.UTC(2025, 5, 1)
const loose: RetentionPolicy = { keepTurns: 100, keepDays: 30, maxSessionBytes: Number.MAX_SAFE_INTEGER }

/** Records in seq order from [anchor, days ago, content] rows; each writes its content to a file of its own. */
function records(rows: ReadonlyArray<readonly [string, number, string?]>): CheckpointRecord[] {
  return rows.map(([anchor, daysAgo, content], index) => ({
    anchor, seq: index + 1, root: '/w', path: `f${index}`, existed: false, before: null,
    after: contentHash(Buffer.from(content ?? `${anchor} ${index}`)), at: NOW - daysAgo * DAY,
  }))
}

const kept = (plan: { keep: ReadonlySet<string> }) => [...plan.keep].sort()

describe('planRetention', () => {
  it('keeps the newest keepTurns turns', () => {
    const plan = planRetention(records([['t1', 0], ['t2', 0], ['t2', 0], ['t3', 0], ['t4', 0]]), { ...loose, keepTurns: 2 }, NOW)
    expect(plan).toEqual({ keep: new Set(['t3', 't4']), dropped: { turns: ['t1', 't2'], days: [], size: [] }, seenThrough: 5 })
  })

  it('drops turns older than keepDays by their newest record, even the newest turn', () => {
    const rows = [['t1', 40], ['t2', 31], ['t2', 29], ['t3', 10]] as const
    expect(planRetention(records(rows), loose, NOW).dropped).toEqual({ turns: [], days: ['t1'], size: [] })
    expect(kept(planRetention(records(rows), { ...loose, keepDays: 5 }, NOW))).toEqual([])
    // The same log a year later: nothing is young enough.
    expect(planRetention(records(rows), loose, NOW + 365 * DAY).dropped.days).toEqual(['t1', 't2', 't3'])
    expect(kept(planRetention(records(rows), loose, NOW - 20 * DAY))).toEqual(['t1', 't2', 't3'])
  })

  it('sets no age limit with keepDays 0, rather than dropping every turn', () => {
    const plan = planRetention(records([['t1', 400], ['t2', 90]]), { ...loose, keepDays: 0 }, NOW)
    expect(kept(plan)).toEqual(['t1', 't2'])
  })

  it('keeps a turn from some point on only: an old turn between young ones goes with everything before it', () => {
    const plan = planRetention(records([['t1', 1], ['t2', 50], ['t3', 1]]), loose, NOW)
    expect(plan.dropped).toEqual({ turns: [], days: ['t1', 't2'], size: [] })
    expect(kept(plan)).toEqual(['t3'])
  })

  it('keeps turns whose records interleave together: rewinding a kept turn undoes every later record', () => {
    // t1's background job recorded after t2 began.
    const rows = [['t1', 0], ['t2', 0], ['t1', 0], ['t3', 0]] as const
    expect(kept(planRetention(records(rows), { ...loose, keepTurns: 1 }, NOW))).toEqual(['t3'])
    expect(planRetention(records(rows), { ...loose, keepTurns: 2 }, NOW)).toMatchObject({ keep: new Set(['t1', 't2', 't3']), dropped: { turns: [] } })
  })

  it('drops the oldest kept turns while over maxSessionBytes, counting each content once, never the newest turn', () => {
    const rows = records([['t1', 0, 'a'], ['t2', 0, 'b'], ['t3', 0, 'c'], ['t3', 0, 'c'], ['t4', 0, 'd']])
    const contents = new Map(['a', 'b', 'c', 'd'].map((text) => [contentHash(Buffer.from(text)), 1000]))
    const line = (index: number) => Buffer.byteLength(JSON.stringify(rows[index])) + 1
    const size = { bytes: 0, contents }
    // t3 names 'c' twice: it counts once. t3 and t4 take two lines and one content each.
    const twoTurns = line(2) + line(3) + line(4) + 2000
    expect(planRetention(rows, { ...loose, maxSessionBytes: twoTurns }, NOW, size).dropped).toEqual({ turns: [], days: [], size: ['t1', 't2'] })
    expect(kept(planRetention(rows, { ...loose, maxSessionBytes: twoTurns + line(1) + 1000 }, NOW, size))).toEqual(['t2', 't3', 't4'])
    expect(kept(planRetention(rows, { ...loose, maxSessionBytes: 1 }, NOW, size))).toEqual(['t4'])
    // Without the store's sizes the cap is not applied.
    expect(kept(planRetention(rows, { ...loose, maxSessionBytes: 1 }, NOW))).toEqual(['t1', 't2', 't3', 't4'])
  })

  it('plans nothing for a session without records', () => {
    expect(planRetention([], loose, NOW)).toEqual({ keep: new Set(), dropped: { turns: [], days: [], size: [] }, seenThrough: 0 })
  })
})

describe('MemoryCheckpointStore.compact', () => {
  it('drops the other anchors and the contents no record names, and seq goes on after every record went', async () => {
    const store = new MemoryCheckpointStore()
    const entry = (anchor: string, content: string) => ({ anchor, root: '/w', path: 'a', existed: false, before: null, after: Buffer.from(content) })
    await store.append('s1', entry('t1', 'shared'))
    await store.append('s1', entry('t2', 'only t2'))
    await store.append('s2', entry('u1', 'shared'))
    const report = await store.compact('s1', new Set())
    expect(report).toEqual({ droppedRecords: 2, droppedAnchors: ['t1', 't2'], droppedBlobs: 1, freedBytes: expect.any(Number) })
    // Another session still names 'shared'.
    expect(Buffer.from(await store.blob('s2', contentHash(Buffer.from('shared')))).toString()).toBe('shared')
    await expect(store.blob('s1', contentHash(Buffer.from('only t2')))).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_MISSING' })
    expect((await store.append('s1', entry('t3', 'x'))).seq).toBe(3)
  })
})

describe('ctx.checkpoints.compact', () => {
  async function setup(config: Record<string, unknown>, store: CheckpointStore = new MemoryCheckpointStore()) {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, config)
    ctx.checkpoints.registerStore(store)
    const logged: string[] = []
    const exporter: Exporter = { colors: false, export: (message: Message) => { if (message.name === 'checkpoint' && message.type === 'info') logged.push(Logger.format(exporter, message)) } }
    ctx.logger.exporter(exporter)
    const edit = (anchor: string, path: string, content: string) => ctx.checkpoints.record('s1', { anchor, root: '/w', path, existed: false, before: null, after: Buffer.from(content) })
    return { ctx, store, logged, edit }
  }

  it('applies the Config, says what it dropped, and seq goes on in the memory store', async () => {
    const { ctx, logged, edit } = await setup({ keepTurns: 2 })
    for (const anchor of ['t1', 't2', 't3']) await edit(anchor, `${anchor}.txt`, anchor)
    const report = await ctx.checkpoints.compact('s1')
    expect(report).toEqual({ droppedRecords: 1, droppedAnchors: ['t1'], droppedBlobs: 1, freedBytes: expect.any(Number) })
    expect(logged).toEqual([`session s1: dropped the checkpoints of 1 turns (1 over keepTurns, 0 over keepDays, 0 over maxSessionBytes): t1; 1 records, 1 contents, ${report.freedBytes} bytes freed; 2 turns kept`])
    expect((await ctx.checkpoints.plan('s1', 't2')).items.map((item) => item.path)).toEqual(['t3.txt', 't2.txt'])
    expect((await edit('t4', 't4.txt', 't4')).seq).toBe(4)
  })

  it('says which turns asked for lost their checkpoints to retention, so a rewind to before them is not taken for a whole one', async () => {
    const { ctx, edit } = await setup({ keepTurns: 2 })
    for (const anchor of ['t1', 't2', 't3']) await edit(anchor, `${anchor}.txt`, anchor)
    await ctx.checkpoints.compact('s1')
    expect((await ctx.checkpoints.plan('s1', ['t1', 't2', 't3'])).pruned).toEqual(['t1'])
    expect((await ctx.checkpoints.plan('s1', ['t2', 't3'])).pruned).toEqual([])
    expect((await ctx.checkpoints.rewind('s1', ['t1', 't2', 't3'])).pruned).toEqual(['t1'])
  })

  it('keeps the newest turn however large it is, and drops older ones over maxSessionBytes', async () => {
    const { ctx, edit } = await setup({ maxSessionBytes: 1000 })
    await edit('t1', 'a', 'x'.repeat(600))
    await edit('t2', 'b', 'y'.repeat(600))
    await edit('t3', 'c', 'z'.repeat(2000))
    expect((await ctx.checkpoints.compact('s1')).droppedAnchors).toEqual(['t1', 't2'])
    expect((await ctx.checkpoints.compact('s1')).droppedRecords).toBe(0)
  })

  it('leaves a session without records alone, and says CHECKPOINT_COMPACT_UNSUPPORTED for a store that cannot compact', async () => {
    const { ctx, logged } = await setup({})
    expect(await ctx.checkpoints.compact('nobody')).toEqual({ droppedRecords: 0, droppedAnchors: [], droppedBlobs: 0, freedBytes: 0 })
    expect(logged).toEqual([])
    const plain = new MemoryCheckpointStore()
    const store: CheckpointStore = { append: (id, entry) => plain.append(id, entry), records: (id) => plain.records(id), blob: (id, hash) => plain.blob(id, hash) }
    const { ctx: other } = await setup({}, store)
    await expect(other.checkpoints.compact('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_COMPACT_UNSUPPORTED' })
  })
})
