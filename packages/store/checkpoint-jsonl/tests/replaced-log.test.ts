// A log another process replaced (compacted, then recorded into) or removed between this store's
// check of the file and its reopen for writing: what the other process recorded is never lost, and
// what this store cannot do is said as a ReinError naming the file.
import { readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { BLOB_FOLDER, LOG_FILE, type JsonlCheckpointStore } from '../src/index.ts'
import { openStore as open } from './temp-root.ts'

function created(anchor: string, path: string): CheckpointEntry {
  return { anchor, root: '/w', path, existed: false, before: null, after: Buffer.from(path) }
}

/**
 * Runs `elsewhere` each time `store` is about to reopen a loaded log for writing: the moment after
 * its check that the file is the one it read, which no public call can reach from outside.
 */
function beforeReopening(store: JsonlCheckpointStore, elsewhere: () => Promise<void>): void {
  const inner = store as unknown as { forWriting: (log: unknown, tries?: number) => Promise<void> }
  const original = inner.forWriting.bind(store)
  inner.forWriting = async (log, tries) => {
    await elsewhere()
    return original(log, tries)
  }
}

/**
 * A store on `base` that has read session s1's log, and another process (a second store) that runs
 * `meanwhile` just before this one reopens the log to write: once, or at every try.
 */
async function racedBy(base: string, meanwhile: (there: JsonlCheckpointStore) => Promise<void>, { every = false } = {}) {
  const { store: here } = await open({}, base)
  await here.records('s1')
  let done = false
  beforeReopening(here, async () => {
    if (done) return
    done = !every
    const { store: there } = await open({}, base)
    await meanwhile(there)
    await there.close()
  })
  return here
}

/** Session s1 with t1 (path a) and t2 (path b), written by a store that is then closed. */
async function twoTurns() {
  const { store, base } = await open()
  await store.append('s1', created('t1', 'a'))
  await store.append('s1', created('t2', 'b'))
  await store.close()
  return base
}

const seqs = async (base: string) => {
  const { store } = await open({}, base)
  return (await store.records('s1')).map((record) => `${record.seq}:${record.anchor}`)
}

describe('a log replaced or removed just before this store writes to it', () => {
  it('a compaction that finds the log replaced by another process keeps what that process recorded since', async () => {
    const base = await twoTurns()
    // Another process compacts (a new file) and records t3.
    const here = await racedBy(base, async (there) => {
      await there.compact('s1', new Set(['t2']))
      await there.append('s1', created('t3', 'c'))
    })
    const report = await here.compact('s1', new Set(['t2', 't3']))
    expect(report).toMatchObject({ droppedRecords: 0, droppedAnchors: [] })
    expect((await here.records('s1')).map((record) => `${record.seq}:${record.anchor}`)).toEqual(['2:t2', '3:t3'])
    expect(await seqs(base)).toEqual(['2:t2', '3:t3'])
    expect(await readdir(join(base, 's1', BLOB_FOLDER))).toContain(contentHash(Buffer.from('c')))
  })

  it('a compaction that finds the log grown by another process drops what is not kept of the log it finds, and keeps what that process recorded', async () => {
    const base = await twoTurns()
    const here = await racedBy(base, async (there) => {
      await there.compact('s1', new Set(['t1', 't2']))
      await there.append('s1', created('t3', 'c'))
    })
    expect(await here.compact('s1', new Set(['t3']))).toMatchObject({ droppedRecords: 2, droppedAnchors: ['t1', 't2'] })
    expect(await seqs(base)).toEqual(['3:t3'])
    expect([...await here.pruned('s1')].sort()).toEqual(['t1', 't2'])
  })

  it('a record after another process recorded into the log numbers on from that record (no seq twice)', async () => {
    const base = await twoTurns()
    const here = await racedBy(base, async (there) => {
      await there.append('s1', created('t3', 'c'))
    })
    expect((await here.append('s1', created('t4', 'd'))).seq).toBe(4)
    expect(await seqs(base)).toEqual(['1:t1', '2:t2', '3:t3', '4:t4'])
  })

  it('a log changed by another process at every try says so as CHECKPOINT_FAILED, naming the file, and records nothing', async () => {
    const base = await twoTurns()
    const log = join(base, 's1', LOG_FILE)
    let turn = 0
    const here = await racedBy(base, async (there) => {
      await there.append('s1', created(`x${++turn}`, `x${turn}`))
      await there.compact('s1', new Set([`x${turn}`]))
    }, { every: true })
    const refused = here.append('s1', created('t9', 'z'))
    await expect(refused).rejects.toMatchObject({ name: 'ReinError', code: 'CHECKPOINT_FAILED', details: { file: log } })
    await expect(refused).rejects.toThrow(/changed by another process.*two processes are recording/)
    expect((await readFile(log, 'utf8'))).not.toContain('"t9"')
  })

  it('a log removed after it was read is not recorded into: CHECKPOINT_FAILED, naming the file', async () => {
    const base = await twoTurns()
    const log = join(base, 's1', LOG_FILE)
    const { store: here } = await open({}, base)
    await here.records('s1')
    let once = true
    beforeReopening(here, async () => {
      if (!once) return
      once = false
      await unlink(log)
    })
    const refused = here.append('s1', created('t3', 'c'))
    await expect(refused).rejects.toMatchObject({ name: 'ReinError', code: 'CHECKPOINT_FAILED', details: { file: log } })
    await expect(refused).rejects.toThrow(/removed/)
    await expect(readFile(log)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('a log removed or replaced while this store holds it open for writing', () => {
  /** A store that recorded t1 (path a) into session s1, so it holds the log open for appending. */
  async function recording() {
    const { store, base } = await open()
    await store.append('s1', created('t1', 'a'))
    return { store, base, log: join(base, 's1', LOG_FILE) }
  }

  it('a record after the log was deleted while open for writing is refused, not written into the deleted file', async () => {
    const { store, log } = await recording()
    await unlink(log)
    for (const anchor of ['t2', 't3']) {
      // The same refusal each time: the held file does not make a later record fail differently.
      const refused = store.append('s1', created(anchor, 'b'))
      await expect(refused).rejects.toMatchObject({ name: 'ReinError', code: 'CHECKPOINT_FAILED', details: { file: log } })
      await expect(refused).rejects.toThrow(/was removed after rein read it .*not recorded; run rein again on the session to start a new checkpoint log/)
    }
    await expect(readFile(log)).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await store.records('s1')).map((record) => record.anchor)).toEqual(['t1'])
  })

  it('a compaction after the log was deleted while open for writing is refused, not made again from the records it held', async () => {
    const { store, log } = await recording()
    await store.append('s1', created('t2', 'b'))
    await unlink(log)
    const refused = store.compact('s1', new Set(['t2']))
    await expect(refused).rejects.toMatchObject({ name: 'ReinError', code: 'CHECKPOINT_FAILED', details: { file: log } })
    await expect(refused).rejects.toThrow(/was removed after rein read it/)
    await expect(readFile(log)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('a record after a deleted log was started again by another process goes into the new log', async () => {
    const { store, base, log } = await recording()
    await unlink(log)
    await expect(store.append('s1', created('t2', 'b'))).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED' })
    const { store: there } = await open({}, base)
    await there.append('s1', created('t3', 'c'))
    await there.close()
    expect((await store.append('s1', created('t4', 'd'))).seq).toBe(2)
    expect(await seqs(base)).toEqual(['1:t3', '2:t4'])
  })

  it('a record after the log was moved aside and made again goes into the new file, not the old one', async () => {
    const { store, base, log } = await recording()
    await rename(log, `${log}.aside`)
    await writeFile(log, '')
    expect((await store.append('s1', created('t2', 'b'))).seq).toBe(1)
    expect(await seqs(base)).toEqual(['1:t2'])
    expect(await readFile(`${log}.aside`, 'utf8')).not.toContain('"t2"')
  })
})
