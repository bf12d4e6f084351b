import { spawn } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { contentHash, type CheckpointRecord } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { BLOB_FOLDER, JsonlCheckpointStore, LOG_FILE } from '../src/index.ts'
import { formatRecord } from '../src/log-format.ts'
import { tempRoot } from './temp-root.ts'

const CHILD = new URL('./fixtures/compact-child.ts', import.meta.url).pathname
const ANCHORS = 100
const PER_ANCHOR = 50
const RECORDS = ANCHORS * PER_ANCHOR
const KEPT = Array.from({ length: ANCHORS / 2 }, (_, index) => `a${ANCHORS / 2 + index}`)

/** A large log written straight to disk: 5 000 records, each naming its own content; every anchor's first also names a shared one. */
async function largeLog(base: string): Promise<CheckpointRecord[]> {
  const session = join(base, 's1')
  await mkdir(join(session, BLOB_FOLDER), { recursive: true, mode: 0o700 })
  const records: CheckpointRecord[] = []
  const contents = new Map<string, string>()
  for (let anchor = 0; anchor < ANCHORS; anchor++) {
    for (let index = 0; index < PER_ANCHOR; index++) {
      const before = index === 0 ? 'shared by every turn' : null
      const after = `turn ${anchor} file ${index} `.repeat(4)
      for (const content of [before, after]) if (content !== null) contents.set(contentHash(Buffer.from(content)), content)
      records.push({
        anchor: `a${anchor}`, seq: records.length + 1, root: '/w', path: `f${index}.txt`, existed: before !== null,
        before: before === null ? null : contentHash(Buffer.from(before)), after: contentHash(Buffer.from(after)), at: 1_700_000_000_000 + records.length,
      })
    }
  }
  await writeFile(join(session, LOG_FILE), Buffer.concat(records.map(formatRecord)), { mode: 0o600 })
  const entries = [...contents]
  for (let start = 0; start < entries.length; start += 256) {
    await Promise.all(entries.slice(start, start + 256).map(([hash, content]) => writeFile(join(session, BLOB_FOLDER, hash), content, { mode: 0o600 })))
  }
  return records
}

const hashes = (records: readonly CheckpointRecord[]) => new Set(records.flatMap((record) => [record.before, record.after]).filter((hash): hash is string => hash !== null))

/** Runs the child and kills it with SIGKILL once `ready` says so (polled after it printed "compacting"). */
async function compactAndKill(base: string, ready: () => Promise<boolean>): Promise<void> {
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', CHILD, base, JSON.stringify(KEPT)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('compacting')) resolve() })
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before it began compacting`)))
  })
  while (child.exitCode === null && !await ready()) await new Promise((resolve) => setTimeout(resolve, 1))
  child.kill('SIGKILL')
  await exited
}

describe('a compaction killed with SIGKILL', () => {
  const session = (base: string) => join(base, 's1')
  const killPoints: Record<string, (base: string) => () => Promise<boolean>> = {
    'while it writes the new log': (base) => async () => (await readdir(session(base))).some((name) => name.startsWith(`.${LOG_FILE}.`)),
    'once the new log is in place': (base) => async () => (await readFile(join(session(base), LOG_FILE), 'utf8').catch(() => '')).startsWith('{"compacted"'),
    'while it removes contents': (base) => async () => (await readdir(join(session(base), BLOB_FOLDER))).length < RECORDS,
  }

  for (const [when, ready] of Object.entries(killPoints)) {
    it(`${when}: leaves a log with every record or only the kept ones, their contents, and seq going on; a second compaction finishes`, async () => {
      const base = await tempRoot()
      const records = await largeLog(base)
      const kept = records.filter((record) => KEPT.includes(record.anchor))
      await compactAndKill(base, ready(base))

      const store = new JsonlCheckpointStore({ folder: async (id) => join(base, id) })
      try {
        const loaded = await store.records('s1')
        expect([RECORDS, kept.length]).toContain(loaded.length)
        expect(loaded).toEqual(loaded.length === RECORDS ? records : kept)
        for (const hash of hashes(loaded)) expect(contentHash(await store.blob('s1', hash))).toBe(hash)

        const report = await store.compact('s1', new Set(KEPT))
        expect(report.droppedRecords).toBe(loaded.length === RECORDS ? RECORDS - kept.length : 0)
        expect(await store.records('s1')).toEqual(kept)
        expect(new Set(await readdir(join(session(base), BLOB_FOLDER)))).toEqual(hashes(kept))
        // The witness of the highest seq is there when the compaction that rewrote the log got to write it.
        expect((await readdir(session(base))).filter((name) => name !== 'checkpoints.last-seq').sort()).toEqual([BLOB_FOLDER, LOG_FILE])
        expect((await store.append('s1', { anchor: 'next', root: '/w', path: 'n', existed: false, before: null, after: Buffer.from('n') })).seq).toBe(RECORDS + 1)
      } finally {
        await store.close()
      }
    }, 60_000)
  }
})
