/**
 * `JsonlCheckpointStore`: per session, `checkpoints.jsonl` in the session's folder and contents in
 * `checkpoint-blobs/<sha256>` beside it. A record resolves only after its contents and its line are
 * fsynced; appends and compactions of one session are serialized.
 */

import { constants, type Stats } from 'node:fs'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { ReinError, ensurePrivateDir, makeFilePrivate, openPrivateFile } from '@rein/base'
import { isContentHash, type CheckpointEntry, type CheckpointRecord, type CheckpointStore } from '@rein/checkpoint'
import { readContent, writeContent, type StoredContent, type WriteOptions } from './blobs.ts'
import { compactLog, measure } from './compact.ts'
import { syncFolder, type Sync } from './durable.ts'
import { forgetWitness, readWitness, recordedThrough, writeWitness } from './last-seq.ts'
import { formatRecord, parseLog } from './log-format.ts'
import type { CheckpointSize, CompactOptions, CompactReport } from '@rein/checkpoint'

/** The log's file name inside a session folder. */
export const LOG_FILE = 'checkpoints.jsonl'
/** The contents' folder name inside a session folder. */
export const BLOB_FOLDER = 'checkpoint-blobs'

/** What the store needs: where a session's folder is (`ctx.sessions.folder`), and an fsync seam for tests. */
export interface JsonlCheckpointStoreOptions {
  folder: (sessionId: string) => Promise<string>
  /** Flushes a file or folder to disk. Default: `handle.sync()`. */
  sync?: (handle: FileHandle) => Promise<void>
}

/** One session's open log. Shared with `compact.ts`, which swaps in the compacted file. */
export interface SessionLog {
  folder: string
  file: string
  /** The log, open read-only after a load and for appending (`O_APPEND`) once a record is about to be written; absent until the first record creates the file. */
  handle: FileHandle | undefined
  /**
   * `handle` is open for appending and was the file the path names at the last check: a read never
   * needs that, so a log its owner made read-only still loads. A log found removed is set back to
   * false, so the next write reopens the path and is refused there rather than lost in the unlinked file.
   */
  writable: boolean
  /** Bytes of whole lines (and a whole last record without its newline): where a failed append cuts back to. */
  size: number
  /** Bytes of a torn last line past `size`, left on disk by a read and cut by the next append. */
  torn: number
  /** The last record lacks its newline: the next append ends its line first. */
  unterminated: boolean
  records: CheckpointRecord[]
  /** The highest `seq` ever given: the last record's, or a compaction's marker when it dropped that record. */
  lastSeq: number
  /** The anchors compactions dropped records of (kept in the marker). */
  pruned: ReadonlySet<string>
  blobFolderReady: boolean
  /** Contents this process wrote, or read back whole, in the blob folder: no need to read them again to build a delta on them. */
  intact: Set<string>
  /** The tail of this session's chain: appends and compactions run one at a time. */
  queue: Promise<unknown>
}

/** The JSONL checkpoint store (see the module comment). `close` releases every open log. */
export class JsonlCheckpointStore implements CheckpointStore {
  private readonly _logs = new Map<string, Promise<SessionLog>>()
  private readonly _sync: Sync
  private _closed = false

  constructor(private readonly options: JsonlCheckpointStoreOptions) {
    this._sync = options.sync ?? ((handle) => handle.sync())
  }

  append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    return this.serialized(sessionId, async (log) => {
      // Before any content goes in: a record refused for a read-only log leaves nothing behind.
      await this.forWriting(log)
      // The after is an edit of the before: stored as a delta of it when that saves.
      const edit = entry.before !== null && entry.after !== null
      const before = entry.before === null ? undefined : await this.writeBlob(log, entry.before, { asBase: edit })
      const base = before && entry.before ? { content: entry.before, ...before } : undefined
      const after = entry.after === null ? undefined : await this.writeBlob(log, entry.after, { base })
      const record: CheckpointRecord = Object.freeze({
        anchor: entry.anchor, seq: log.lastSeq + 1, root: entry.root, path: entry.path, existed: entry.existed, before: before?.hash ?? null, after: after?.hash ?? null, at: Date.now(),
        ...(entry.by === undefined ? {} : { by: entry.by }), ...(entry.gap === undefined ? {} : { gap: entry.gap }),
        ...(entry.mode === undefined ? {} : { mode: entry.mode }),
        ...(entry.modeAfter === undefined ? {} : { modeAfter: entry.modeAfter }),
        ...(entry.createdFolders === undefined ? {} : { createdFolders: entry.createdFolders }),
        ...(entry.folder ? { folder: true as const } : {}),
      })
      await this.appendLine(log, formatRecord(record))
      log.records.push(record)
      log.lastSeq = record.seq
      // Only once the line is durable: the witness may lag the log, never lead it.
      if (log.handle) await writeWitness(log.folder, record.seq, log.handle)
      return record
    })
  }

  /** Rejects as `append` would before it writes: a log that cannot be read back, or written (read-only, replaced). */
  ready(sessionId: string): Promise<void> {
    return this.serialized(sessionId, (log) => this.forWriting(log))
  }

  async records(sessionId: string): Promise<readonly CheckpointRecord[]> {
    return this.serialized(sessionId, async (log) => [...log.records])
  }

  /** The content, rebuilt through its delta chain when it is stored as one (see `blobs.ts`). */
  async blob(sessionId: string, hash: string): Promise<Uint8Array> {
    if (!isContentHash(hash)) throw new ReinError('CHECKPOINT_BLOB_MISSING', `checkpoint content ${hash} is not a content hash`, { details: { sessionId, hash } })
    const folder = (await this.log(sessionId)).folder
    return readContent(join(folder, BLOB_FOLDER), hash, { sessionId, folderName: BLOB_FOLDER })
  }

  /**
   * Rewrites the log with only the records of `keepAnchors` (and those above `seenThrough`), same
   * seqs, behind a marker line holding the highest `seq` given; then deletes the contents no kept
   * record names and stale temp files. The new log replaces the old by rename: a kill leaves one
   * of them whole. Nothing is rewritten when nothing is dropped.
   */
  compact(sessionId: string, keepAnchors: ReadonlySet<string>, options: CompactOptions = {}): Promise<CompactReport> {
    return this.serialized(sessionId, (log) => compactLog(log, keepAnchors, options, { sync: this._sync, logFile: LOG_FILE, blobFolder: BLOB_FOLDER, forWriting: (each) => this.forWriting(each) }))
  }

  async pruned(sessionId: string): Promise<ReadonlySet<string>> {
    return this.serialized(sessionId, async (log) => new Set(log.pruned))
  }

  /** The log's bytes plus every file in the blob folder; `contents` by hash. */
  size(sessionId: string): Promise<CheckpointSize> {
    return this.serialized(sessionId, (log) => measure(log, BLOB_FOLDER))
  }

  async close(): Promise<void> {
    this._closed = true
    const logs = [...this._logs.values()]
    this._logs.clear()
    await Promise.all(logs.map(async (pending) => {
      const log = await pending.catch(() => undefined)
      if (!log) return
      await log.queue.catch(() => undefined)
      await log.handle?.close()
    }))
  }

  private serialized<T>(sessionId: string, task: (log: SessionLog) => Promise<T>): Promise<T> {
    return this.log(sessionId).then((log) => {
      const run = log.queue.then(async () => {
        await this.refresh(log)
        return task(log)
      })
      log.queue = run.catch(() => undefined)
      return run
    })
  }

  /**
   * Reads the log again when it is not the file this store read: another process recorded into the
   * session (closed here, resumed there) or compacted it since. Numbering on from a stale tail
   * would repeat a seq and damage the log. One stat per operation (two with the log open).
   */
  private async refresh(log: SessionLog): Promise<void> {
    const onDisk = await stat(log.file).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    })
    if (onDisk === undefined) {
      // Removed (or moved aside) since: a record appended to the held file would go where nothing
      // reads it again. Reads keep what was read; a write reopens the path and is refused.
      log.writable = false
      return
    }
    if (log.handle !== undefined && onDisk.size === log.size + log.torn && sameFile(onDisk, await log.handle.stat())) return
    const fresh = await this.read(log.folder)
    // The old handle goes whatever happens to its close: the log must not stay stale.
    await log.handle?.close().catch(() => undefined)
    Object.assign(log, { handle: fresh.handle, writable: fresh.writable, size: fresh.size, torn: fresh.torn, unterminated: fresh.unterminated, records: fresh.records, lastSeq: fresh.lastSeq, pruned: fresh.pruned, intact: new Set<string>() })
  }

  private log(sessionId: string): Promise<SessionLog> {
    if (this._closed) return Promise.reject(new ReinError('CHECKPOINT_STORE_CLOSED', 'the checkpoint store was closed; load @rein/checkpoint-jsonl again'))
    let pending = this._logs.get(sessionId)
    if (!pending) {
      pending = this.load(sessionId)
      // A failed load is retried by the next call rather than remembered.
      pending.catch(() => this._logs.delete(sessionId))
      this._logs.set(sessionId, pending)
    }
    return pending
  }

  /** Reads the session's log; a session without one gets none until its first record (reading creates nothing, and changes no byte). */
  private async load(sessionId: string): Promise<SessionLog> {
    return this.read(await this.options.folder(sessionId))
  }

  private async read(folder: string): Promise<SessionLog> {
    const file = join(folder, LOG_FILE)
    // Read before the log: a record written between the two reads can then only make the log longer than it says.
    const witness = await readWitness(folder)
    const empty: SessionLog = { folder, file, handle: undefined, writable: false, size: 0, torn: 0, unterminated: false, records: [], lastSeq: 0, pruned: new Set(), blobFolderReady: false, intact: new Set(), queue: Promise.resolve() }
    let handle: FileHandle
    try {
      // Read-only: a plan or `rein show` needs no write permission and changes nothing, the mode included.
      handle = await open(file, constants.O_RDONLY)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty
      throw error
    }
    try {
      const text = await handle.readFile()
      const { records, lastSeq, pruned, validBytes, unterminated } = parseLog(text, file, recordedThrough(witness, await handle.stat()))
      // A torn last line stays until the next append cuts it: a read (plan, show) writes nothing.
      return { ...empty, handle, size: validBytes, torn: text.length - validBytes, unterminated, records, lastSeq, pruned }
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  private async appendLine(log: SessionLog, record: Buffer): Promise<void> {
    const handle = log.handle ?? await this.createLog(log)
    // Appending after a torn line would glue the record onto it: cut the tear, or end the line.
    if (log.torn > 0) {
      await handle.truncate(log.size)
      await this._sync(handle)
      log.torn = 0
    }
    const line = log.unterminated ? Buffer.concat([Buffer.from('\n'), record]) : record
    try {
      let offset = 0
      while (offset < line.length) {
        const { bytesWritten } = await handle.write(line, offset, line.length - offset)
        if (bytesWritten <= 0) throw new Error(`the write stopped after ${offset} of ${line.length} bytes`)
        offset += bytesWritten
      }
      await this._sync(handle)
      log.size += line.length
      log.unterminated = false
    } catch (error) {
      // No partial line may stay behind: the next record would be glued to it.
      await handle.truncate(log.size).catch(() => undefined)
      throw error
    }
  }

  /** Creates the log for its first record, and makes its name durable. */
  private async createLog(log: SessionLog): Promise<FileHandle> {
    // A witness left by a log moved aside or deleted speaks of that one, whose inode this file may get.
    await forgetWitness(log.folder)
    const handle = await openPrivateFile(log.file, 'a+')
    try {
      await syncFolder(log.folder, this._sync)
    } catch (error) {
      await handle.close()
      throw error
    }
    log.handle = handle
    log.writable = true
    return handle
  }

  /**
   * Reopens the loaded log for appending (and makes it private), before anything of a record or a
   * compaction is written. A log another process recorded into or replaced since the check is read again first.
   */
  private async forWriting(log: SessionLog, tries = 3): Promise<void> {
    // `refresh` drops `writable` when the path names no file: the reopen below refuses (ENOENT).
    if (log.handle === undefined || log.writable) return
    const loaded = await log.handle.stat()
    if (mayNotWrite(loaded)) throw readOnly(log.file, loaded)
    const handle = await openForAppend(log.file, loaded)
    try {
      const opened = await handle.stat()
      // Another process may have recorded into it (it grew) or compacted it (a new file) since the check.
      if (!sameFile(opened, loaded) || opened.size !== log.size + log.torn) {
        if (tries <= 1) throw new ReinError('CHECKPOINT_FAILED', `${log.file} was changed by another process each time rein opened it to record: two processes are recording into the session at once; end the other one, then try again`, { details: { file: log.file } })
        await handle.close()
        await this.refresh(log)
        return this.forWriting(log, tries - 1)
      }
      // Only its owner (or root) may change a file's mode; another user's log shared with this one stays as shared.
      if (ownsOrRoot(loaded)) await makeFilePrivate(handle)
    } catch (error) {
      await handle.close().catch(() => undefined)
      throw error
    }
    await log.handle.close().catch(() => undefined)
    log.handle = handle
    log.writable = true
  }

  /** Stores `content` once under its hash (see `writeContent`), making the blob folder first. */
  private async writeBlob(log: SessionLog, content: Uint8Array, options: Omit<WriteOptions, 'intact'>): Promise<StoredContent> {
    const folder = join(log.folder, BLOB_FOLDER)
    if (!log.blobFolderReady) {
      await ensurePrivateDir(folder)
      await syncFolder(log.folder, this._sync)
      log.blobFolderReady = true
    }
    return writeContent(folder, content, { ...options, intact: log.intact }, this._sync)
  }
}

/** Opens the log to append to it: `O_APPEND` without `O_CREAT`, so every write lands at the end, even after a truncate. */
async function openForAppend(file: string, loaded: Stats): Promise<FileHandle> {
  try {
    return await open(file, constants.O_WRONLY | constants.O_APPEND)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw readOnly(file, loaded, error)
    // Not made again: a log that is gone took the records this store holds with it, and a new one
    // would start part-way through the session. A later process starts a new log from nothing.
    if (code === 'ENOENT') throw new ReinError('CHECKPOINT_FAILED', `${file} was removed after rein read it (moved aside, or deleted by another process), so this checkpoint was not recorded; run rein again on the session to start a new checkpoint log`, { details: { file }, cause: error })
    throw error
  }
}

/** Whether two stats are of one file: the path may name a new file with the old one still open. */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev
}

/** This process's uid, or `undefined` where there are none (Windows: the mode's write bit is the read-only attribute). */
const uid = process.getuid?.()

/** Whether this process owns the file, or is root, which the file system lets write any file. */
function ownsOrRoot(stats: Stats): boolean {
  return uid === undefined || uid === 0 || uid === stats.uid
}

/**
 * A log without its owner's write bit, for its owner or root: its owner made it read-only, and root
 * would write it anyway. For anyone else the open decides (a group may write a log its owner may not).
 */
function mayNotWrite(stats: Stats): boolean {
  return ownsOrRoot(stats) && (stats.mode & 0o200) === 0
}

/** `CHECKPOINT_FAILED` for a log that cannot be written (`cause`: the open's error, if it came to that). */
function readOnly(file: string, stats: Stats, cause?: unknown): ReinError {
  const problem = whyNotWritable(file, stats, (cause as NodeJS.ErrnoException | undefined)?.code)
  return new ReinError('CHECKPOINT_FAILED', `${file} ${problem.why}: rein reads the session's checkpoints from it but cannot record more; ${problem.fix}`, { details: { file }, cause })
}

/** Why the log cannot be written and what to do, worded for the case: the mount, another user's file, or its mode. */
function whyNotWritable(file: string, stats: Stats, code: string | undefined): { why: string; fix: string } {
  if (code === 'EROFS') return { why: 'is on a read-only file system', fix: 'mount it read-write to record checkpoints again' }
  if (code !== undefined && !ownsOrRoot(stats)) {
    return { why: `belongs to another user (uid ${stats.uid}) and this one (uid ${uid}) may not write it`, fix: 'ask its owner to let you write it, or run rein as that user' }
  }
  if (code !== undefined && (stats.mode & 0o200) !== 0) {
    return { why: `could not be opened for writing (${code}) though its mode allows it`, fix: 'an immutable or append-only attribute (lsattr), an ACL (getfacl) or a security policy forbids it: lift that to record checkpoints again' }
  }
  return { why: 'is read-only', fix: `make it writable (chmod u+w ${file}) to record checkpoints again` }
}
