import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FileHandle } from 'node:fs/promises'
import { contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { BLOB_FOLDER, LOG_FILE } from '../src/index.ts'
import { openStore as open } from './temp-root.ts'

function entry(path: string, before: string | null, after: string | null, anchor = 't1'): CheckpointEntry {
  return { anchor, root: '/w', path, existed: before !== null, before: before === null ? null : Buffer.from(before), after: after === null ? null : Buffer.from(after) }
}

describe('JsonlCheckpointStore', () => {
  it('keeps records and contents across a reopen, and seq continues from the tail', async () => {
    const { store, base } = await open()
    await store.append('s1', entry('a', null, 'one'))
    await store.append('s1', entry('a', 'one', 'two'))
    await store.close()
    const { store: again } = await open({}, base)
    const records = await again.records('s1')
    expect(records.map((record) => [record.seq, record.before, record.after])).toEqual([
      [1, null, contentHash(Buffer.from('one'))],
      [2, contentHash(Buffer.from('one')), contentHash(Buffer.from('two'))],
    ])
    expect((await again.append('s1', entry('b', null, 'x'))).seq).toBe(3)
    expect(Buffer.from(await again.blob('s1', contentHash(Buffer.from('two')))).toString()).toBe('two')
  })

  it('sees what another process recorded (or compacted away) since it read a log, and numbers on from it', async () => {
    const { store: here, base } = await open()
    await here.append('s1', entry('a', null, 'one'))
    // Another process: the session closed here and was resumed there.
    const { store: there } = await open({}, base)
    await there.append('s1', entry('b', null, 'two'))
    await there.close()
    expect((await here.records('s1')).map((record) => record.seq)).toEqual([1, 2])
    expect((await here.append('s1', entry('c', null, 'three'))).seq).toBe(3)
    await here.close()
    const { store: later } = await open({}, base)
    expect((await later.records('s1')).map((record) => [record.seq, record.path])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']])
    // A compaction elsewhere replaces the file: read again, not appended to the old one.
    const { store: other } = await open({}, base)
    await other.compact('s1', new Set())
    await other.close()
    expect(await later.records('s1')).toEqual([])
    expect((await later.append('s1', entry('d', null, 'four'))).seq).toBe(4)
  })

  it('remembers which anchors compaction dropped, across compactions and a reopen', async () => {
    const { store, base } = await open()
    for (const anchor of ['t1', 't2', 't3']) await store.append('s1', entry(anchor, null, anchor, anchor))
    await store.compact('s1', new Set(['t2', 't3']))
    await store.compact('s1', new Set(['t3']))
    expect([...await store.pruned!('s1')].sort()).toEqual(['t1', 't2'])
    await store.close()
    const { store: again } = await open({}, base)
    expect([...await again.pruned!('s1')].sort()).toEqual(['t1', 't2'])
    expect([...await again.pruned!('never-compacted')]).toEqual([])
  })

  it('drops a torn last line on load and appends after the whole ones', async () => {
    const { store, base } = await open()
    await store.append('s1', entry('a', null, 'one'))
    await store.close()
    await appendFile(join(base, 's1', LOG_FILE), '{"anchor":"t1","seq":2,"ro')
    const { store: again } = await open({}, base)
    expect((await again.records('s1')).map((record) => record.seq)).toEqual([1])
    expect((await again.append('s1', entry('b', null, 'x'))).seq).toBe(2)
    await again.close()
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).split('\n')
    expect(lines.map((line) => line === '' ? '' : JSON.parse(line).seq)).toEqual([1, 2, ''])
  })

  it('refuses a log damaged before its last line with CHECKPOINT_LOG_DAMAGED', async () => {
    const { store, base } = await open()
    await mkdir(join(base, 's1'), { recursive: true })
    await writeFile(join(base, 's1', LOG_FILE), 'not json\n{"anchor":"t1","seq":2,"root":"/w","path":"a","existed":false,"before":null,"after":null}\n')
    await expect(store.records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
  })

  it('stores a content once however many records name it, 0600 in a 0700 folder', async () => {
    const { store, base } = await open()
    await store.append('s1', entry('a', null, 'same'))
    await store.append('s1', entry('b', null, 'same'))
    await store.append('s1', entry('a', 'same', 'other'))
    const blobs = join(base, 's1', BLOB_FOLDER)
    expect((await readdir(blobs)).sort()).toEqual([contentHash(Buffer.from('same')), contentHash(Buffer.from('other'))].sort())
    expect((await stat(blobs)).mode & 0o777).toBe(0o700)
    expect((await stat(join(blobs, contentHash(Buffer.from('same'))))).mode & 0o777).toBe(0o600)
    expect((await stat(join(base, 's1', LOG_FILE))).mode & 0o777).toBe(0o600)
  })

  it('resolves a record only after its contents and its line are fsynced', async () => {
    const events: string[] = []
    let logFile = ''
    const sync = async (handle: FileHandle) => {
      // Held back a little: a record that resolved without waiting for its fsync would show up first.
      await new Promise((resolve) => setTimeout(resolve, 5))
      await handle.sync()
      const log = await readFile(logFile, 'utf8').catch(() => '')
      events.push(log.includes('"path":"a"') ? 'sync with the line' : 'sync')
    }
    const { store, base } = await open({ sync })
    logFile = join(base, 's1', LOG_FILE)
    await store.append('s1', entry('a', 'old', 'content')).then(() => events.push('resolved'))
    expect(events.slice(-2)).toEqual(['sync with the line', 'resolved'])
    expect(events.filter((event) => event === 'sync').length).toBeGreaterThanOrEqual(2)
  })

  it('rejects the record and leaves no line behind when the fsync fails', async () => {
    let fail = false
    const sync = async (handle: FileHandle) => {
      if (fail) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
      await handle.sync()
    }
    const { store, base } = await open({ sync })
    await store.append('s1', entry('a', null, 'one'))
    fail = true
    await expect(store.append('s1', entry('b', null, 'two'))).rejects.toMatchObject({ code: 'EIO' })
    fail = false
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
    expect((await store.append('s1', entry('c', null, 'three'))).seq).toBe(2)
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line).path)
    expect(lines).toEqual(['a', 'c'])
  })

  it('says CHECKPOINT_BLOB_MISSING for a content that is not there or a name that is not a hash', async () => {
    const { store } = await open()
    await expect(store.blob('s1', contentHash(Buffer.from('never')))).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_MISSING' })
    await expect(store.blob('s1', '../../etc/passwd')).rejects.toMatchObject({ code: 'CHECKPOINT_BLOB_MISSING' })
  })

  it('keeps sessions apart', async () => {
    const { store } = await open()
    await store.append('s1', entry('a', null, 'one'))
    expect(await store.records('s2')).toEqual([])
    expect((await store.append('s2', entry('b', null, 'two'))).seq).toBe(1)
  })

  it('serializes concurrent appends of one session into increasing seqs', async () => {
    const { store, base } = await open()
    const records = await Promise.all(Array.from({ length: 20 }, (_, index) => store.append('s1', entry(`f${index}`, null, `c${index}`))))
    expect(records.map((record) => record.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1))
    await store.close()
    const { store: again } = await open({}, base)
    expect((await again.records('s1')).length).toBe(20)
  })

  it('refuses work after close with CHECKPOINT_STORE_CLOSED', async () => {
    const { store } = await open()
    await store.append('s1', entry('a', null, 'one'))
    await store.close()
    await expect(store.append('s1', entry('b', null, 'two'))).rejects.toMatchObject({ code: 'CHECKPOINT_STORE_CLOSED' })
  })
})
