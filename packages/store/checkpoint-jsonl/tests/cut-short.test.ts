// A log cut short mid-file: whole records gone (truncated to half its length, cut at a line's
// end, lines taken out of the middle or the start). A rewind that read what was left would put
// back part of what the turns changed and say it succeeded; the store says the log is damaged
// instead, naming the records missing. A torn last line (a crash mid-append) still loads as before.
import { mkdir, readFile, rename, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, contentHash } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { LOG_FILE } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

const entry = (anchor: string, path: string, content = path) => ({ anchor, root: '/w', path, existed: false, before: null, after: Buffer.from(content) })

/** A session `s1` with `count` records (one file each, a turn per two), written by a store now closed. */
async function sessionWith(count: number): Promise<{ base: string; file: string }> {
  const { store, base } = await openStore()
  for (let index = 1; index <= count; index++) await store.append('s1', entry(`t${Math.ceil(index / 2)}`, `f${index}.txt`))
  await store.close()
  return { base, file: join(base, 's1', LOG_FILE) }
}

const open = async (base: string) => (await openStore({}, base)).store

/** The log's lines, each with its newline. */
async function linesOf(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split(/(?<=\n)/)
}

describe('a checkpoint log cut short mid-file', () => {
  it('rein rewind over a log truncated to half its length fails as damaged, naming the missing records, and touches no file', async () => {
    const base = await tempRoot()
    const workspace = await tempRoot()
    const compose = async () => {
      const ctx = new Context()
      await ctx.plugin(CheckpointService, {})
      const { store } = await openStore({}, base)
      ctx.checkpoints.registerStore(store)
      return { ctx, store }
    }
    const first = await compose()
    for (let index = 1; index <= 6; index++) {
      const path = `f${index}.txt`
      await writeFile(join(workspace, path), 'old')
      await first.ctx.checkpoints.record('s1', { anchor: `t${Math.ceil(index / 2)}`, root: workspace, path, existed: true, before: Buffer.from('old'), after: Buffer.from(`new ${index}`) })
      await writeFile(join(workspace, path), `new ${index}`)
    }
    await first.store.close()
    const file = join(base, 's1', LOG_FILE)
    const size = (await stat(file)).size
    await truncate(file, Math.floor(size / 2))
    const cut = await readFile(file)

    const second = await compose()
    const refused = second.ctx.checkpoints.rewind('s1', 't1')
    await expect(refused).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file } })
    await expect(refused).rejects.toThrow(/records \d to 6 are missing/)
    await expect(second.ctx.checkpoints.plan('s1', 't1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    for (let index = 1; index <= 6; index++) expect(await readFile(join(workspace, `f${index}.txt`), 'utf8')).toBe(`new ${index}`)
    expect((await readFile(file)).equals(cut)).toBe(true)
  })

  it('a log cut at a line\'s end (no torn line left to tell) is refused, and an append to it too, writing nothing', async () => {
    const { base, file } = await sessionWith(4)
    const lines = await linesOf(file)
    await writeFile(file, lines.slice(0, 2).join(''))
    const store = await open(base)
    await expect(store.records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', message: expect.stringContaining('records 3 to 4 are missing') })
    await expect(store.append('s1', entry('t9', 'x.txt'))).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    expect(await readFile(file, 'utf8')).toBe(lines.slice(0, 2).join(''))
  })

  it('a log with whole lines taken out of its middle is refused at the line after the gap', async () => {
    const { base, file } = await sessionWith(5)
    const lines = await linesOf(file)
    await writeFile(file, [...lines.slice(0, 2), ...lines.slice(4)].join(''))
    await expect((await open(base)).records('s1')).rejects.toMatchObject({
      code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 3, offset: Buffer.byteLength(lines.slice(0, 2).join('')) }, message: expect.stringContaining('records 3 to 4 are missing'),
    })
  })

  it('a log whose first lines were taken out is refused at its first line', async () => {
    const { base, file } = await sessionWith(3)
    await writeFile(file, (await linesOf(file)).slice(1).join(''))
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 1 }, message: expect.stringContaining('record 1 is missing') })
  })

  it('a log truncated to nothing in place is refused, not read as a session without checkpoints', async () => {
    const { base, file } = await sessionWith(2)
    await truncate(file, 0)
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 1, offset: 0 }, message: expect.stringContaining('records 1 to 2 are missing') })
  })

  it('a log truncated while this store holds it open is refused at the next read', async () => {
    const { store, base } = await openStore()
    for (let index = 1; index <= 3; index++) await store.append('s1', entry('t1', `f${index}.txt`))
    const file = join(base, 's1', LOG_FILE)
    await writeFile(file, (await linesOf(file)).slice(0, 1).join(''))
    await expect(store.records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', message: expect.stringContaining('records 2 to 3 are missing') })
  })

  it('a compacted log cut short after its marker is refused, the records the compaction kept being gone', async () => {
    const { base, file } = await sessionWith(6)
    const store = await open(base)
    await store.compact('s1', new Set(['t2', 't3']))
    await store.close()
    const lines = await linesOf(file)
    expect(lines).toHaveLength(5)
    await writeFile(file, lines.slice(0, 2).join(''))
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 1 }, message: expect.stringContaining('kept 4 records; 1 is left') })
  })

  it('a compacted log with records after its compaction cut short is refused', async () => {
    const { base, file } = await sessionWith(4)
    const store = await open(base)
    await store.compact('s1', new Set(['t2']))
    await store.append('s1', entry('t3', 'g5.txt'))
    await store.append('s1', entry('t3', 'g6.txt'))
    await store.close()
    const lines = await linesOf(file)
    await writeFile(file, [...lines.slice(0, 3), ...lines.slice(4)].join(''))
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { line: 4 }, message: expect.stringContaining('record 5 is missing') })
    await writeFile(file, lines.slice(0, 4).join(''))
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', message: expect.stringContaining('record 6 is missing') })
  })
})

describe('what still loads beside that check', () => {
  it('a torn last line a crash left (its record never resolved) loads as before, and the next append takes its number', async () => {
    const { base, file } = await sessionWith(3)
    const whole = await readFile(file, 'utf8')
    await writeFile(file, `${whole}{"anchor":"t2","seq":4,"ro`)
    const store = await open(base)
    expect((await store.records('s1')).map((record) => record.seq)).toEqual([1, 2, 3])
    expect((await store.append('s1', entry('t2', 'f4.txt'))).seq).toBe(4)
    await store.close()
    expect((await (await open(base)).records('s1')).map((record) => record.seq)).toEqual([1, 2, 3, 4])
  })

  it('a log from before the count (nothing beside it, a marker without one) loads as before', async () => {
    const base = await tempRoot()
    const { store } = await openStore({}, base)
    await store.records('s1')
    const line = (seq: number) => `${JSON.stringify({ anchor: 't2', seq, root: '/w', path: `f${seq}`, existed: false, before: null, after: contentHash(Buffer.from(`c${seq}`)), at: 1 })}\n`
    await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify({ compacted: { lastSeq: 9, at: 1, pruned: ['t1'] } })}\n${line(5)}${line(9)}${line(10)}`)
    expect((await (await open(base)).records('s1')).map((record) => record.seq)).toEqual([5, 9, 10])
  })

  it('a witness that cannot be written (a folder in its place) fails no record, and loses only the check', async () => {
    const { store, base } = await openStore()
    await mkdir(join(base, 's1', 'checkpoints.last-seq'), { recursive: true })
    for (let index = 1; index <= 3; index++) expect((await store.append('s1', entry('t1', `f${index}.txt`))).seq).toBe(index)
    await store.close()
    const file = join(base, 's1', LOG_FILE)
    await writeFile(file, (await linesOf(file)).slice(0, 2).join(''))
    expect((await (await open(base)).records('s1')).map((record) => record.seq)).toEqual([1, 2])
  })

  it('a log moved aside starts afresh: its new records load without the old count taken for missing ones', async () => {
    const { base, file } = await sessionWith(4)
    await rename(file, `${file}.aside`)
    const store = await open(base)
    expect(await store.records('s1')).toEqual([])
    expect((await store.append('s1', entry('t1', 'a.txt'))).seq).toBe(1)
    await store.close()
    expect((await (await open(base)).records('s1')).map((record) => record.seq)).toEqual([1])
  })
})
