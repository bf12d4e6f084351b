import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileHandle } from 'node:fs/promises'
import { contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { BLOB_FOLDER, JsonlCheckpointStore, LOG_FILE, type JsonlCheckpointStoreOptions } from '../src/index.ts'
import { openStore } from './temp-root.ts'

async function open(options: Partial<JsonlCheckpointStoreOptions> = {}, root?: string) {
  const opened = await openStore(options, root)
  return { ...opened, session: join(opened.base, 's1') }
}

function entry(anchor: string, path: string, before: string | null, after: string | null): CheckpointEntry {
  return { anchor, root: '/w', path, existed: before !== null, before: before === null ? null : Buffer.from(before), after: after === null ? null : Buffer.from(after) }
}

const hash = (text: string) => contentHash(Buffer.from(text))
const blobs = async (session: string) => (await readdir(join(session, BLOB_FOLDER))).sort()

/** Three turns over two files: t1 creates a (one) and b (shared), t2 edits a, t3 edits a and b. */
async function threeTurns(store: JsonlCheckpointStore) {
  await store.append('s1', entry('t1', 'a', null, 'one'))
  await store.append('s1', entry('t1', 'b', null, 'shared'))
  await store.append('s1', entry('t2', 'a', 'one', 'two'))
  await store.append('s1', entry('t3', 'a', 'two', 'three'))
  await store.append('s1', entry('t3', 'c', null, 'shared'))
}

describe('JsonlCheckpointStore.compact', () => {
  it('keeps only the records of the kept anchors, with their seqs, and says what it dropped', async () => {
    const { store, session } = await open()
    await threeTurns(store)
    const sizeBefore = (await stat(join(session, LOG_FILE))).size
    const report = await store.compact('s1', new Set(['t2', 't3']))
    expect((await store.records('s1')).map((record) => [record.anchor, record.seq, record.path])).toEqual([['t2', 3, 'a'], ['t3', 4, 'a'], ['t3', 5, 'c']])
    expect(report).toEqual({ droppedRecords: 2, droppedAnchors: ['t1'], droppedBlobs: 0, freedBytes: expect.any(Number) })
    expect(report.freedBytes).toBe(sizeBefore - (await stat(join(session, LOG_FILE))).size)
    // Every content is still named: 'one' by t2's before, 'shared' by t3's c.
    expect(await blobs(session)).toEqual([hash('one'), hash('two'), hash('three'), hash('shared')].sort())
  })

  it('deletes the contents no kept record names, and keeps one a dropped and a kept record share', async () => {
    const { store, session } = await open()
    await threeTurns(store)
    const report = await store.compact('s1', new Set(['t3']))
    expect(report.droppedAnchors).toEqual(['t1', 't2'])
    expect(report.droppedBlobs).toBe(1)
    // 'one' only t1 and t2 named; 'shared' t1 (dropped) and t3 (kept) both name.
    expect(await blobs(session)).toEqual([hash('two'), hash('three'), hash('shared')].sort())
    expect(Buffer.from(await store.blob('s1', hash('shared'))).toString()).toBe('shared')
    expect(report.freedBytes).toBeGreaterThan('one'.length)
  })

  it('continues seq from the highest ever given, after compaction and after a restart, even when every record went', async () => {
    const { store, base, session } = await open()
    await threeTurns(store)
    // The newest anchor goes: the next record must not take its seq 5 again.
    await store.compact('s1', new Set(['t1', 't2']))
    expect((await store.append('s1', entry('t4', 'd', null, 'x'))).seq).toBe(6)
    await store.compact('s1', new Set())
    expect(await store.records('s1')).toEqual([])
    expect((await readdir(join(session, BLOB_FOLDER)))).toEqual([])
    expect((await store.append('s1', entry('t5', 'e', null, 'y'))).seq).toBe(7)
    await store.compact('s1', new Set())
    await store.close()

    const { store: again } = await open({}, base)
    expect(await again.records('s1')).toEqual([])
    expect((await again.append('s1', entry('t6', 'f', null, 'z'))).seq).toBe(8)
    await again.close()
    const { store: third } = await open({}, base)
    expect((await third.records('s1')).map((record) => [record.anchor, record.seq])).toEqual([['t6', 8]])
    expect((await readFile(join(session, LOG_FILE), 'utf8')).split('\n')[0]).toMatch(/^\{"compacted":\{"lastSeq":7,/)
  })

  it('keeps the records above seenThrough whatever their anchor: a turn that began after the choice stays', async () => {
    const { store } = await open()
    await threeTurns(store)
    await store.append('s1', entry('t4', 'a', 'three', 'four'))
    const report = await store.compact('s1', new Set(['t3']), { seenThrough: 5 })
    expect(report.droppedAnchors).toEqual(['t1', 't2'])
    expect((await store.records('s1')).map((record) => record.anchor)).toEqual(['t3', 't3', 't4'])
  })

  it('rewrites nothing when nothing is dropped, but removes stray contents and stale temp files', async () => {
    const { store, session } = await open()
    await threeTurns(store)
    const log = await readFile(join(session, LOG_FILE))
    const inode = (await stat(join(session, LOG_FILE))).ino
    await writeFile(join(session, BLOB_FOLDER, hash('stray')), 'stray')
    await writeFile(join(session, BLOB_FOLDER, `.${hash('half')}.123.uuid.tmp`), 'hal')
    await writeFile(join(session, `.${LOG_FILE}.123.uuid.tmp`), 'half a log')
    // What a kill left of the witness's temp file (the highest seq recorded, see last-seq.ts).
    await writeFile(join(session, `.${LOG_FILE}.123.uuid.last-seq.tmp`), '7')
    await writeFile(join(session, BLOB_FOLDER, 'README'), 'not ours to remove')
    const report = await store.compact('s1', new Set(['t1', 't2', 't3']))
    expect(report).toEqual({ droppedRecords: 0, droppedAnchors: [], droppedBlobs: 1, freedBytes: 'stray'.length + 'hal'.length + 'half a log'.length + '7'.length })
    expect(await readFile(join(session, LOG_FILE))).toEqual(log)
    expect((await stat(join(session, LOG_FILE))).ino).toBe(inode)
    expect(await blobs(session)).toEqual([hash('one'), hash('two'), hash('three'), hash('shared'), 'README'].sort())
    expect((await readdir(session)).sort()).toEqual([BLOB_FOLDER, LOG_FILE, 'checkpoints.last-seq'])
  })

  it('creates nothing for a session without checkpoints: records, size and compact only read', async () => {
    const { store, session } = await open()
    expect(await store.records('s1')).toEqual([])
    expect(await store.size('s1')).toEqual({ bytes: 0, contents: new Map() })
    expect(await store.compact('s1', new Set())).toEqual({ droppedRecords: 0, droppedAnchors: [], droppedBlobs: 0, freedBytes: 0 })
    expect(await readdir(session)).toEqual([])
    expect((await store.append('s1', entry('t1', 'a', null, 'one'))).seq).toBe(1)
    expect((await stat(join(session, LOG_FILE))).mode & 0o777).toBe(0o600)
  })

  it('measures the log and each content', async () => {
    const { store, session } = await open()
    await threeTurns(store)
    const size = await store.size('s1')
    const log = (await stat(join(session, LOG_FILE))).size
    expect(size.contents).toEqual(new Map([['one', 3], ['two', 3], ['three', 5], ['shared', 6]].map(([text, bytes]) => [hash(String(text)), Number(bytes)])))
    expect(size.bytes).toBe(log + 3 + 3 + 5 + 6)
  })

  it('runs after the appends before it and before the ones after it', async () => {
    const { store, base } = await open()
    await store.append('s1', entry('t1', 'a', null, 'one'))
    const [, , report, late] = await Promise.all([
      store.append('s1', entry('t1', 'b', null, 'two')),
      store.append('s1', entry('t2', 'a', 'one', 'three')),
      store.compact('s1', new Set(['t2'])),
      store.append('s1', entry('t3', 'a', 'three', 'four')),
    ])
    expect(report.droppedRecords).toBe(2)
    expect(late.seq).toBe(4)
    await store.close()
    const { store: again } = await open({}, base)
    expect((await again.records('s1')).map((record) => [record.anchor, record.seq])).toEqual([['t2', 3], ['t3', 4]])
  })

  it('leaves the old log and a working store when the new log cannot be made durable', async () => {
    let fail = false
    const sync = async (handle: FileHandle) => {
      if (fail) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
      await handle.sync()
    }
    const { store, session } = await open({ sync })
    await threeTurns(store)
    const log = await readFile(join(session, LOG_FILE))
    fail = true
    await expect(store.compact('s1', new Set(['t3']))).rejects.toMatchObject({ code: 'EIO' })
    fail = false
    expect(await readFile(join(session, LOG_FILE))).toEqual(log)
    expect((await readdir(session)).sort()).toEqual([BLOB_FOLDER, LOG_FILE, 'checkpoints.last-seq'])
    expect((await store.records('s1')).length).toBe(5)
    expect((await store.append('s1', entry('t4', 'a', 'three', 'four'))).seq).toBe(6)
    expect((await store.compact('s1', new Set(['t4']))).droppedRecords).toBe(5)
  })
})
