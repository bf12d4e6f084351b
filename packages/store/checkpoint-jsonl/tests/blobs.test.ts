// How the store keeps contents on disk: deltas, compression, raw files from before, and what a
// damaged or missing base does. Real files in a temp folder.
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileHandle } from 'node:fs/promises'
import { Context } from '@deepseek-ai/cordis'
import CheckpointService, { contentHash } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { MAGIC, MAX_DEPTH, parseHeader } from '../src/blob-format.ts'
import { BLOB_FOLDER, JsonlCheckpointStore, LOG_FILE, type JsonlCheckpointStoreOptions } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

async function open(options: Partial<JsonlCheckpointStoreOptions> = {}, root?: string) {
  const opened = await openStore(options, root)
  return { ...opened, blobs: join(opened.base, 's1', BLOB_FOLDER) }
}

/** A 4 KB text file, version `edit`: line `edit` changed (the original has none changed). */
const version = (edit = -1, name = 'a') => Buffer.from(Array.from({ length: 80 }, (_, index) => index === edit ? `${name} ${index} edited\n` : `${name} line ${index}: ${'x'.repeat(40)}\n`).join(''))
const edit = (anchor: string, path: string, before: Buffer | null, after: Buffer | null) => ({ anchor, root: '/w', path, existed: before !== null, before, after })
const header = async (blobs: string, content: Buffer) => {
  const file = await readFile(join(blobs, contentHash(content)))
  return parseHeader(file, file.length)
}
const reads = async (store: JsonlCheckpointStore, content: Buffer) => Buffer.from(await store.blob('s1', contentHash(content))).equals(content)

describe('contents on disk', () => {
  it('stores an edit as a small delta of its before, compressed whole contents, and reads both back exactly, after a reopen too', async () => {
    const { store, base, blobs } = await open()
    await store.append('s1', edit('t1', 'a', version(), version(3)))
    expect(await header(blobs, version())).toMatchObject({ kind: 'whole', compressed: true })
    expect(await header(blobs, version(3))).toMatchObject({ kind: 'delta', depth: 1, base: contentHash(version()) })
    expect((await stat(join(blobs, contentHash(version(3))))).size).toBeLessThan(150)
    expect((await stat(join(blobs, contentHash(version())))).size).toBeLessThan(version().length / 4)
    await store.close()
    const { store: again } = await open({}, base)
    expect(await reads(again, version())).toBe(true)
    expect(await reads(again, version(3))).toBe(true)
  })

  it('reads raw contents written before encoding, one that starts with the magic bytes included, and builds deltas on them', async () => {
    const { store, blobs } = await open()
    await mkdir(blobs, { recursive: true })
    const plain = version()
    // Looks like a delta header naming a base that is not there: only its hash says it is raw.
    const tricky = Buffer.concat([MAGIC, Buffer.from([1, 1, 0, 1, 0, 0, 0, 0, 0, 9]), randomBytes(32), Buffer.alloc(12), Buffer.from('rest')])
    for (const content of [plain, tricky]) await writeFile(join(blobs, contentHash(content)), content, { mode: 0o600 })
    expect(await reads(store, plain)).toBe(true)
    expect(await reads(store, tricky)).toBe(true)
    await store.append('s1', edit('t1', 'a', plain, version(9)))
    expect(await header(blobs, version(9))).toMatchObject({ kind: 'delta', depth: 1, base: contentHash(plain) })
    expect(await reads(store, version(9))).toBe(true)
    // The raw file stays as it was: it is still a good base.
    expect(await readFile(join(blobs, contentHash(plain)))).toEqual(plain)
  })

  it(`caps a delta chain at ${MAX_DEPTH}: the next edit is stored whole and starts a new chain`, async () => {
    const { store, base, blobs } = await open()
    const versions = Array.from({ length: MAX_DEPTH + 4 }, (_, index) => version(index - 1))
    for (let index = 1; index < versions.length; index++) await store.append('s1', edit(`t${index}`, 'a', versions[index - 1]!, versions[index]!))
    const depths = await Promise.all(versions.map(async (content) => (await header(blobs, content))?.depth))
    expect(depths).toEqual([0, ...Array.from({ length: MAX_DEPTH }, (_, index) => index + 1), 0, 1, 2])
    await store.close()
    const { store: again } = await open({}, base)
    for (const content of versions) expect(await reads(again, content)).toBe(true)
  })

  it('stores an edit whole when the delta would not save half of it', async () => {
    const { store, blobs } = await open()
    const rewritten = Buffer.concat([version().subarray(0, 100), randomBytes(3000)])
    await store.append('s1', edit('t1', 'a', version(), rewritten))
    expect(await header(blobs, rewritten)).toMatchObject({ kind: 'whole', depth: 0 })
  })

  it('fails only the contents whose chain needs a missing or damaged base, each with a code naming the base', async () => {
    const { store, blobs } = await open()
    await store.append('s1', edit('t1', 'a', version(), version(1)))
    await store.append('s1', edit('t2', 'a', version(1), version(2)))
    await store.append('s1', edit('t2', 'b', version(-1, 'b'), version(5, 'b')))
    // Cut short: its middle is a byte shorter than its header says.
    const damaged = await readFile(join(blobs, contentHash(version(1))))
    await writeFile(join(blobs, contentHash(version(1))), damaged.subarray(0, -1))
    await expect(store.blob('s1', contentHash(version(2)))).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_DAMAGED', details: { hash: contentHash(version(2)), base: contentHash(version(1)) } })
    await expect(store.blob('s1', contentHash(version(1)))).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_DAMAGED' })
    expect(await reads(store, version())).toBe(true)
    expect(await reads(store, version(5, 'b'))).toBe(true)

    await writeFile(join(blobs, contentHash(version(1))), damaged)
    expect(await reads(store, version(2))).toBe(true)
    await unlink(join(blobs, contentHash(version())))
    const missing = store.blob('s1', contentHash(version(2)))
    await expect(missing).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_MISSING', details: { base: contentHash(version()) } })
    await expect(missing).rejects.toThrow(/delta chain needs/)
    expect(await reads(store, version(5, 'b'))).toBe(true)
  })

  it('rewinds every file it can when one content has lost its base, and reports that one as failed', async () => {
    const sessions = await tempRoot()
    const workspace = await tempRoot()
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    const { store, blobs } = await open({}, sessions)
    ctx.checkpoints.registerStore(store)
    const files = { a: [version(), version(1), version(2)], b: [version(-1, 'b'), version(1, 'b'), version(2, 'b')] }
    for (const [path, versions] of Object.entries(files)) await writeFile(join(workspace, path), versions[0]!)
    for (const [turn, anchor] of ['t1', 't2'].entries()) {
      for (const [path, versions] of Object.entries(files)) {
        await ctx.checkpoints.record('s1', { ...edit(anchor, path, versions[turn]!, versions[turn + 1]!), root: workspace })
        await writeFile(join(workspace, path), versions[turn + 1]!)
      }
    }
    // Rewinding t2 restores version 1 of a and of b, each a delta of its version 0: a loses that base.
    await unlink(join(blobs, contentHash(version())))
    const result = await ctx.checkpoints.rewind('s1', 't2')
    expect(result.restored.map((item) => item.path)).toEqual(['b'])
    expect(result.failed.map((item) => [item.path, item.error.split(':')[0]])).toEqual([['a', 'CHECKPOINT_BLOB_MISSING']])
    expect(await readFile(join(workspace, 'b'))).toEqual(version(1, 'b'))
    expect(await readFile(join(workspace, 'a'))).toEqual(version(2))
  })

  it('rewrites whole a before that no longer reads back, when an edit is about to be built on it', async () => {
    const { store, base, blobs } = await open()
    await store.append('s1', edit('t1', 'a', version(), version(1)))
    await store.close()
    await unlink(join(blobs, contentHash(version())))
    // A new process: it did not write version 1, so it reads it back before using it as a base.
    const { store: again } = await open({}, base)
    await again.append('s1', edit('t2', 'a', version(1), version(2)))
    expect(await header(blobs, version(1))).toMatchObject({ kind: 'whole' })
    expect(await header(blobs, version(2))).toMatchObject({ kind: 'delta', base: contentHash(version(1)), depth: 1 })
    expect(await reads(again, version(2))).toBe(true)
  })

  it('makes the base durable (renamed, folder fsynced) before the delta that needs it is written', async () => {
    const root = await tempRoot()
    const blobs = join(root, 's1', BLOB_FOLDER)
    const durable = new Set<string>()
    const seen: string[] = []
    const sync = async (handle: FileHandle) => {
      await handle.sync()
      const names = await readdir(blobs).catch(() => [])
      // Only an fsync of the blob folder itself makes the names in it durable.
      const folder = await stat(blobs).catch(() => undefined)
      if ((await handle.stat()).ino === folder?.ino) for (const name of names) durable.add(name)
      else if (!(await handle.stat()).isDirectory()) for (const name of names.filter((file) => file.startsWith(`.${contentHash(version(1))}.`))) seen.push(`${name} with base ${durable.has(contentHash(version())) ? 'durable' : 'not durable'}`)
    }
    const { store } = await open({ sync }, root)
    await store.append('s1', edit('t1', 'a', version(), version(1)))
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatch(/with base durable$/)
    expect(await header(blobs, version(1))).toMatchObject({ kind: 'delta' })
  })

  it('measures the bytes on disk: the log plus each file as stored', async () => {
    const { store, base, blobs } = await open()
    await store.append('s1', edit('t1', 'a', version(), version(1)))
    await store.append('s1', edit('t2', 'a', version(1), version(2)))
    const size = await store.size('s1')
    const files = await readdir(blobs)
    const onDisk = new Map(await Promise.all(files.map(async (name) => [name, (await stat(join(blobs, name))).size] as const)))
    expect(size.contents).toEqual(onDisk)
    expect(size.bytes).toBe((await stat(join(base, 's1', LOG_FILE))).size + [...onDisk.values()].reduce((sum, bytes) => sum + bytes, 0))
    expect(size.bytes).toBeLessThan(version().length)
  })
})

describe('compaction of delta chains', () => {
  it('keeps every base a kept delta needs, transitively, and drops the contents nothing kept needs', async () => {
    const { store, base, blobs } = await open()
    // a: v0 → v1 → v2 → v3 over t1..t3, each a delta of the one before. b: only in t1.
    await store.append('s1', edit('t1', 'a', version(), version(1)))
    await store.append('s1', edit('t1', 'b', version(-1, 'b'), version(1, 'b')))
    await store.append('s1', edit('t2', 'a', version(1), version(2)))
    await store.append('s1', edit('t3', 'a', version(2), version(3)))
    // c: an edit whose delta goes with t1 while its base stays, named by t3.
    await store.append('s1', edit('t1', 'c', version(-1, 'c'), version(1, 'c')))
    await store.append('s1', edit('t3', 'c', null, version(-1, 'c')))
    const report = await store.compact('s1', new Set(['t3']))
    // t3 names v2, v3 and c0; v3 needs v2, v1, v0. b0, b1 and c1 go.
    expect(report.droppedBlobs).toBe(3)
    expect((await readdir(blobs)).sort()).toEqual([version(), version(1), version(2), version(3), version(-1, 'c')].map(contentHash).sort())
    await store.close()
    const { store: again } = await open({}, base)
    for (const content of [version(2), version(3), version(-1, 'c')]) expect(await reads(again, content)).toBe(true)
    // Nothing names v0 and v1 once t3 goes too: the whole chain goes with it.
    await again.compact('s1', new Set())
    expect(await readdir(blobs)).toEqual([])
  })
})
