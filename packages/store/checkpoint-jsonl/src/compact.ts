/**
 * Compaction of one session's log, run inside that session's queue: the kept records behind a
 * marker line in a new file that replaces the old by rename, then the contents no kept record
 * needs (names, or reads through a delta chain). The order makes a kill at any point safe: until
 * the rename the old log and every content are there; after it, the new log and every content it
 * needs.
 */

import { randomUUID } from 'node:crypto'
import { lstat, readdir, rename, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { openPrivateFile } from '@rein/base'
import { isContentHash, type CheckpointRecord } from '@rein/checkpoint'
import { withBases } from './blobs.ts'
import { syncFolder, type Sync } from './durable.ts'
import { writeWitness } from './last-seq.ts'
import type { SessionLog } from './jsonl-store.ts'
import { formatMarker, formatRecord } from './log-format.ts'
import type { CheckpointSize, CompactOptions, CompactReport } from '@rein/checkpoint'

/** Where the session's files are named, and the fsync to use. */
export interface CompactContext {
  sync: Sync
  logFile: string
  blobFolder: string
  /** Opens the log for writing: refuses a read-only one (see `JsonlCheckpointStore`). */
  forWriting: (log: SessionLog) => Promise<void>
}

/** Files are stat'ed and removed this many at a time. */
const BATCH = 64

/** Compacts `log` in place (see the module comment); `log` then holds the new file's handle and records. */
export async function compactLog(log: SessionLog, keepAnchors: ReadonlySet<string>, options: CompactOptions, context: CompactContext): Promise<CompactReport> {
  const seenThrough = options.seenThrough ?? Number.POSITIVE_INFINITY
  const isKept = (record: CheckpointRecord) => keepAnchors.has(record.anchor) || record.seq > seenThrough
  // A read-only log is refused only when it would be rewritten. Opening it for writing may read it
  // again (another process compacted it and recorded since): what is kept is chosen from that one.
  if (log.records.some((record) => !isKept(record))) await context.forWriting(log)
  const kept = log.records.filter(isKept)
  const dropped = log.records.filter((record) => !isKept(record))
  let freedBytes = dropped.length > 0 ? await rewrite(log, kept, new Set([...log.pruned, ...dropped.map((record) => record.anchor)]), context) : 0
  const named = new Set<string>()
  for (const record of kept) for (const hash of [record.before, record.after]) if (hash !== null) named.add(hash)
  const blobFolder = join(log.folder, context.blobFolder)
  // A kept content stored as a delta needs its base, and the base's base, to be read.
  const needed = await withBases(blobFolder, named, BATCH)
  const blobs = await removeFiles(blobFolder, (name) => isContentHash(name) ? !needed.has(name) : name.endsWith('.tmp'), context.sync)
  for (const name of blobs.names) log.intact.delete(name)
  // A compaction killed before its rename leaves its temp log behind.
  const staleLogs = await removeFiles(log.folder, (name) => name.startsWith(`.${context.logFile}.`) && name.endsWith('.tmp'), context.sync)
  freedBytes += blobs.bytes + staleLogs.bytes
  return Object.freeze({
    droppedRecords: dropped.length,
    droppedAnchors: Object.freeze([...new Set(dropped.map((record) => record.anchor))]),
    droppedBlobs: blobs.names.filter(isContentHash).length,
    freedBytes,
  })
}

/** The log's size and every file in the blob folder (stale temp files included); `contents` by hash. */
export async function measure(log: SessionLog, blobFolder: string): Promise<CheckpointSize> {
  const folder = join(log.folder, blobFolder)
  const contents = new Map<string, number>()
  let bytes = log.size + log.torn
  await inBatches(await listFolder(folder), async (name) => {
    const stats = await lstat(join(folder, name)).catch(() => undefined)
    if (!stats?.isFile()) return
    bytes += stats.size
    if (isContentHash(name)) contents.set(name, stats.size)
  })
  return Object.freeze({ bytes, contents })
}

/** Writes the kept records behind the marker (with every anchor ever dropped) to a temp file and renames it over the log. Returns the bytes the log shrank by. */
async function rewrite(log: SessionLog, kept: CheckpointRecord[], pruned: ReadonlySet<string>, { sync, logFile }: CompactContext): Promise<number> {
  const content = Buffer.concat([formatMarker({ lastSeq: log.lastSeq, pruned, records: kept.length }, Date.now()), ...kept.map(formatRecord)])
  const temp = join(log.folder, `.${logFile}.${process.pid}.${randomUUID()}.tmp`)
  // Append mode, like the log it becomes: later records go to the end, even after a truncate.
  const handle = await openPrivateFile(temp, 'ax+')
  try {
    await handle.writeFile(content)
    await sync(handle)
    await rename(temp, log.file)
  } catch (error) {
    await handle.close().catch(() => undefined)
    await unlink(temp).catch(() => undefined)
    throw error
  }
  const old = log.handle
  const freed = Math.max(0, log.size + log.torn - content.length)
  log.handle = handle
  log.writable = true
  log.size = content.length
  log.torn = 0
  log.unterminated = false
  log.records = kept
  log.pruned = pruned
  await old?.close().catch(() => undefined)
  // The new name must be durable before any content the old log named is removed.
  await syncFolder(log.folder, sync)
  // The log is another file now: the witness names it, so a cut in it is seen as in the old one.
  await writeWitness(log.folder, log.lastSeq, handle)
  return freed
}

/** Removes the files in `folder` that `doomed` picks; says which and how many bytes. A missing folder holds none. */
async function removeFiles(folder: string, doomed: (name: string) => boolean, sync: Sync): Promise<{ names: string[]; bytes: number }> {
  const names: string[] = []
  let bytes = 0
  await inBatches((await listFolder(folder)).filter(doomed), async (name) => {
    const file = join(folder, name)
    const stats = await lstat(file).catch(() => undefined)
    if (!stats?.isFile()) return
    await unlink(file)
    names.push(name)
    bytes += stats.size
  })
  if (names.length > 0) await syncFolder(folder, sync)
  return { names, bytes }
}

async function listFolder(folder: string): Promise<string[]> {
  try {
    return await readdir(folder)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

async function inBatches(names: readonly string[], task: (name: string) => Promise<void>): Promise<void> {
  for (let start = 0; start < names.length; start += BATCH) await Promise.all(names.slice(start, start + BATCH).map(task))
}
