// The log's last line: a crash can only tear a line before its newline (the newline is written
// with the record), so only a last line without one is a torn write, dropped; a line that ends in
// its newline and does not parse is damage. Reading — `records`, `plan`, what `rein show` and
// `rein rewind --dry-run` do — never changes the file; only the next append cuts a tear.
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, contentHash } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { LOG_FILE } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

const open = async (base: string) => (await openStore({}, base)).store

function line(seq: number, anchor = 't1'): string {
  return JSON.stringify({ anchor, seq, root: '/w', path: `f${seq}`, existed: false, before: null, after: contentHash(Buffer.from(`c${seq}`)), at: 1 })
}

async function logWith(text: string): Promise<{ base: string; file: string }> {
  const base = await tempRoot()
  await mkdir(join(base, 's1'), { recursive: true })
  const file = join(base, 's1', LOG_FILE)
  await writeFile(file, text)
  return { base, file }
}

describe('the last line of a checkpoint log', () => {
  it('rewind --dry-run on a damaged last line ending in its newline reports damage instead of "nothing to rewind", and truncates nothing', async () => {
    const { base, file } = await logWith('garbage{\n')
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    ctx.checkpoints.registerStore(await open(base))
    await expect(ctx.checkpoints.plan('s1', 't1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 1 } })
    await expect(ctx.checkpoints.records('s1')).rejects.toThrow(`${file}:1:`)
    expect(await readFile(file, 'utf8')).toBe('garbage{\n')
  })

  it('show on a damaged final line after whole records reports damage at that line, and cuts no bytes', async () => {
    const text = `${line(1)}\n${line(2)}\n{"anchor":"t1","seq":3,"ro\n`
    const { base, file } = await logWith(text)
    const store = await open(base)
    await expect(store.records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 3 } })
    await expect(store.append('s1', { anchor: 't2', root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') })).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    expect(await readFile(file, 'utf8')).toBe(text)
  })

  it('reading a log with a torn last line (records, pruned, size, plan) leaves the file as it is; the next append cuts the tear', async () => {
    const text = `${line(1)}\n{"anchor":"t1","seq":2,"ro`
    const { base, file } = await logWith(text)
    const store = await open(base)
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    ctx.checkpoints.registerStore(store)
    expect((await store.records('s1')).map((record) => record.seq)).toEqual([1])
    expect([...await store.pruned('s1')]).toEqual([])
    expect((await store.size('s1')).bytes).toBe(Buffer.byteLength(text))
    await ctx.checkpoints.plan('s1', 't1')
    expect(await readFile(file, 'utf8')).toBe(text)
    expect((await store.append('s1', { anchor: 't2', root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') })).seq).toBe(2)
    const lines = (await readFile(file, 'utf8')).split('\n')
    expect(lines.map((each) => each === '' ? '' : JSON.parse(each).seq)).toEqual([1, 2, ''])
    expect(await (await open(base)).records('s1')).toHaveLength(2)
  })

  it('keeps a whole last record that lacks its newline, and ends its line before the next append', async () => {
    const { base, file } = await logWith(`${line(1)}\n${line(2)}`)
    const store = await open(base)
    expect((await store.records('s1')).map((record) => record.seq)).toEqual([1, 2])
    expect(await readFile(file, 'utf8')).toBe(`${line(1)}\n${line(2)}`)
    expect((await store.append('s1', { anchor: 't2', root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') })).seq).toBe(3)
    await store.close()
    const lines = (await readFile(file, 'utf8')).split('\n')
    expect(lines.map((each) => each === '' ? '' : JSON.parse(each).seq)).toEqual([1, 2, 3, ''])
  })

  it('refuses a last line without its newline that is JSON but not a record, as damage', async () => {
    const text = `${line(1)}\n{"anchor":"t1"}`
    const { base, file } = await logWith(text)
    await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED', details: { file, line: 2 } })
    expect(await readFile(file, 'utf8')).toBe(text)
  })

  it('a log appended to after a torn tail elsewhere is read again without cutting it', async () => {
    const { base, file } = await logWith(`${line(1)}\n`)
    const store = await open(base)
    expect(await store.records('s1')).toHaveLength(1)
    await appendFile(file, '{"anchor":"t1","se')
    expect(await store.records('s1')).toHaveLength(1)
    expect(await readFile(file, 'utf8')).toBe(`${line(1)}\n{"anchor":"t1","se`)
  })
})
