/**
 * `JsonlCheckpointStore`: per session, `checkpoints.jsonl` in the session's folder and contents in
 * `checkpoint-blobs/<sha256>` beside it. A record resolves only after its contents and its line are
 * fsynced; appends of one session are serialized.
 */

import { randomUUID } from 'node:crypto'
import { open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { ReinError, ensurePrivateDir, makeFilePrivate, openPrivateFile } from '@rein/base'
import { contentHash, isContentHash, type CheckpointEntry, type CheckpointRecord, type CheckpointStore } from '@rein/checkpoint'
import { formatRecord, parseLog } from './log-format.ts'

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

interface SessionLog {
  folder: string
  file: string
  handle: FileHandle
  size: number
  records: CheckpointRecord[]
  blobFolderReady: boolean
  /** The tail of this session's append chain: appends run one at a time. */
  queue: Promise<unknown>
}

/** The JSONL checkpoint store (see the module comment). `close` releases every open log. */
export class JsonlCheckpointStore implements CheckpointStore {
  private readonly _logs = new Map<string, Promise<SessionLog>>()
  private readonly _sync: (handle: FileHandle) => Promise<void>
  private _closed = false

  constructor(private readonly options: JsonlCheckpointStoreOptions) {
    this._sync = options.sync ?? ((handle) => handle.sync())
  }

  append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    return this.serialized(sessionId, async (log) => {
      const before = entry.before === null ? null : await this.writeBlob(log, entry.before)
      const after = entry.after === null ? null : await this.writeBlob(log, entry.after)
      const record: CheckpointRecord = Object.freeze({
        anchor: entry.anchor, seq: (log.records.at(-1)?.seq ?? 0) + 1, root: entry.root, path: entry.path, existed: entry.existed, before, after, at: Date.now(),
        ...(entry.by === undefined ? {} : { by: entry.by }), ...(entry.gap === undefined ? {} : { gap: entry.gap }),
      })
      await this.appendLine(log, formatRecord(record))
      log.records.push(record)
      return record
    })
  }

  async records(sessionId: string): Promise<readonly CheckpointRecord[]> {
    return this.serialized(sessionId, async (log) => [...log.records])
  }

  async blob(sessionId: string, hash: string): Promise<Uint8Array> {
    const missing = (cause?: unknown) => new ReinError('CHECKPOINT_BLOB_MISSING', `checkpoint content ${hash} is missing from the session's ${BLOB_FOLDER} folder`, { cause, details: { sessionId, hash } })
    if (!isContentHash(hash)) throw missing()
    const folder = (await this.log(sessionId)).folder
    try {
      return await readFile(join(folder, BLOB_FOLDER, hash))
    } catch (error) {
      throw missing(error)
    }
  }

  async close(): Promise<void> {
    this._closed = true
    const logs = [...this._logs.values()]
    this._logs.clear()
    await Promise.all(logs.map(async (pending) => {
      const log = await pending.catch(() => undefined)
      if (!log) return
      await log.queue.catch(() => undefined)
      await log.handle.close()
    }))
  }

  private serialized<T>(sessionId: string, task: (log: SessionLog) => Promise<T>): Promise<T> {
    return this.log(sessionId).then((log) => {
      const run = log.queue.then(() => task(log))
      log.queue = run.catch(() => undefined)
      return run
    })
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

  private async load(sessionId: string): Promise<SessionLog> {
    const folder = await this.options.folder(sessionId)
    const file = join(folder, LOG_FILE)
    const existed = await stat(file).then(() => true, () => false)
    const handle = await openPrivateFile(file, 'a+')
    try {
      await makeFilePrivate(handle)
      const text = await handle.readFile()
      const { records, validBytes } = parseLog(text, file)
      if (validBytes < text.length) {
        await handle.truncate(validBytes)
        await this._sync(handle)
      }
      if (!existed) await this.syncFolder(folder)
      return { folder, file, handle, size: validBytes, records, blobFolderReady: false, queue: Promise.resolve() }
    } catch (error) {
      await handle.close()
      throw error
    }
  }

  private async appendLine(log: SessionLog, line: Buffer): Promise<void> {
    try {
      let offset = 0
      while (offset < line.length) {
        const { bytesWritten } = await log.handle.write(line, offset, line.length - offset)
        if (bytesWritten <= 0) throw new Error(`the write stopped after ${offset} of ${line.length} bytes`)
        offset += bytesWritten
      }
      await this._sync(log.handle)
      log.size += line.length
    } catch (error) {
      // No partial line may stay behind: the next record would be glued to it.
      await log.handle.truncate(log.size).catch(() => undefined)
      throw error
    }
  }

  /** Stores `content` once under its hash: temp file, fsync, rename, folder fsync. */
  private async writeBlob(log: SessionLog, content: Uint8Array): Promise<string> {
    const hash = contentHash(content)
    const folder = join(log.folder, BLOB_FOLDER)
    if (!log.blobFolderReady) {
      await ensurePrivateDir(folder)
      await this.syncFolder(log.folder)
      log.blobFolderReady = true
    }
    const target = join(folder, hash)
    if (await stat(target).then((stats) => stats.size === content.length, () => false)) return hash
    const temp = join(folder, `.${hash}.${process.pid}.${randomUUID()}.tmp`)
    const handle = await openPrivateFile(temp, 'wx')
    try {
      try {
        // writeFile loops until every byte is written, or throws.
        await handle.writeFile(content)
        await this._sync(handle)
      } finally {
        await handle.close()
      }
      await rename(temp, target)
      await this.syncFolder(folder)
    } catch (error) {
      await unlink(temp).catch(() => undefined)
      throw error
    }
    return hash
  }

  private async syncFolder(folder: string): Promise<void> {
    const handle = await open(folder, 'r')
    try {
      await this._sync(handle)
    } finally {
      await handle.close()
    }
  }
}
