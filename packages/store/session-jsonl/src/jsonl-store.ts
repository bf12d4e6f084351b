/**
 * `JsonlSessionStore`: one JSONL file per session under a root folder, appended in fsynced batches,
 * published atomically by the first write, and claimed by a pid lock file while open.
 */

import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, openSync, readFileSync, statSync, type Stats } from 'node:fs'
import { lstat, open as openFile, readdir, type FileHandle } from 'node:fs/promises'
import { ensurePrivateDir, isReinError, messageOf, PRIVATE_FILE_MODE, ReinError, toFrozenJson } from '@rein/base'
import { refuseMisshapenEvents, SessionSummarizer, type ListOptions, type LoadedSession, type OpenOptions, type SessionEvent, type SessionHeader, type SessionStore, type SessionSummary } from '@rein/session'
import { appendDurably, fileTarget, publishFile } from './durable-write.ts'
import { errorCode } from './fs-errors.ts'
import { eventLine, headerLine, parseSessionFile } from './jsonl-format.ts'
import { LockOwner, isLockHeld, sweepLeftovers } from './lock.ts'
import { readLogLines } from './log-reader.ts'
import { isSessionId, sessionPaths, type SessionPaths } from './paths.ts'
import { SummaryCache, stampOf } from './summary-cache.ts'

/** What `new JsonlSessionStore(options)` takes: the root folder and the batch delay. */
export interface JsonlSessionStoreOptions {
  /** Folder holding `<id>.jsonl` and `<id>.lock`; created (with parents) on first create/open. */
  root: string
  /** Milliseconds appended events wait to be written together; 0 (default) = the next macrotask. */
  batchDelayMs?: number
}

interface Batch {
  epoch: number
  fromSeq: number
  /** The events' lines, joined. */
  text: string
  /** How many lines `text` holds. */
  count: number
  /** Fsync after writing (a flush); without, the lines only reach the file (a `write`). */
  sync: boolean
}

interface OpenSession {
  header: SessionHeader
  paths: SessionPaths
  /** The file's descriptor, open for writing; undefined until the first batch publishes the file. */
  fd: number | undefined
  /** Bytes of whole, durable lines: where the next batch goes. */
  size: number
  /** Events in the file (durably, unless a `write` put them there and no fsync followed yet). */
  written: number
  /** A `write` queued lines that no fsync queued after them covers yet: the next flush must queue one. */
  syncDue: boolean
  /** The seq the next append must start at (written + queued + being written). */
  nextSeq: number
  /**
   * Lines appended since the last batch, joined as they come, and how many: a string grows without
   * the array whose element kind changes under V8's optimized append (it deoptimized there).
   */
  queue: string
  queued: number
  timer: NodeJS.Timeout | undefined
  /** The chain of batch writes; never rejects. */
  tail: Promise<void>
  /** Bumped by each failed batch; batches of an older epoch are dropped unwritten. */
  epoch: number
  /** The failure not yet retried: reported by flush, cleared by an append from seq `written`. */
  failure: ReinError | undefined
  lastFailure: ReinError | undefined
  /** A rollback may have failed: truncate to `size` before the next write. */
  dirty: boolean
}

/** A `SessionStore` on disk: `<root>/<id>.jsonl`, one header line then one event per line. */
export class JsonlSessionStore implements SessionStore {
  private readonly root: string
  private readonly batchDelayMs: number
  private readonly sessions = new Map<string, OpenSession>()
  private readonly locks: LockOwner
  /** The root was made (0700) by this store: later sessions skip the check. */
  private rootReady: Promise<void> | undefined
  /** Whether the root was swept of dead processes' leftovers (at the first claim). */
  private swept = false

  constructor(options: JsonlSessionStoreOptions) {
    this.root = options.root
    this.batchDelayMs = options.batchDelayMs ?? 0
    this.locks = new LockOwner(this.root)
  }

  /** Claims the id; nothing is written until the first append is flushed. */
  async create(header: SessionHeader): Promise<void> {
    const paths = sessionPaths(this.root, header.id)
    const copy = toFrozenJson(header) as SessionHeader
    if (this.sessions.has(header.id) || exists(paths.file)) throw sessionExists(header.id, paths.file)
    await this.claim(paths, header.id)
    if (exists(paths.file)) {
      this.locks.release(paths.lock)
      throw sessionExists(header.id, paths.file)
    }
    this.sessions.set(header.id, newSession(copy, paths, undefined, 0, 0))
  }

  async open(id: string, options: OpenOptions = {}): Promise<LoadedSession> {
    const paths = sessionPaths(this.root, id)
    if (this.sessions.has(id)) {
      throw new ReinError('SESSION_LOCKED', `session ${id} is already open in this store; close it first`, { details: { pid: process.pid } })
    }
    await this.claim(paths, id)
    let fd: number | undefined
    try {
      try {
        // Not through a link: the cut of a torn tail, the narrowed mode and the appends would land on
        // a file outside the sessions folder.
        fd = openSync(paths.file, WRITE_WITHOUT_FOLLOWING)
      } catch (error) {
        throw openError(id, paths.file, error)
      }
      const stats = fstatSync(fd)
      if (!stats.isFile()) throw notALog(id, paths.file, stats)
      // A log an older rein wrote may be readable to others; it holds prompts and outputs.
      if ((stats.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE_FILE_MODE)
      const content = readFileSync(fd)
      const { header, events, validLength, unterminated } = parseSessionFile(content, paths.file, id)
      // Before any byte changes: a log the caller refuses is left as it was.
      options.check?.({ header, events })
      let size = validLength
      // Appending after a torn line would glue the next event onto it: cut the tear, or end the line.
      const target = fileTarget(fd)
      if (validLength < content.length) {
        target.truncate(validLength)
        await target.sync()
      } else if (unterminated) {
        await appendDurably(target, size, Buffer.from('\n'))
        size += 1
      }
      this.sessions.set(id, newSession(header, paths, fd, size, events.length))
      return validLength < content.length ? { header, events, tornBytes: content.length - validLength } : { header, events }
    } catch (error) {
      if (fd !== undefined) closeSync(fd)
      this.locks.release(paths.lock)
      if (isReinError(error)) throw underOtherCase(this.root, id, paths.file, error)
      throw isTooLarge(error) ? tooLarge(paths.file, error) : ioError(`cannot open session ${id} (${paths.file})`, error)
    }
  }

  /** Queues events for the next batch; `flush` is the barrier that makes them durable. */
  async append(id: string, events: readonly SessionEvent[]): Promise<void> {
    const session = this.claimed(id)
    if (events.length === 0) return
    const first = events[0]!.seq
    if (session.failure && first !== session.written) throw session.failure
    let text = ''
    for (let index = 0; index < events.length; index++) {
      const event = events[index]!
      const expected = session.nextSeq + index
      if (event.seq !== expected) {
        throw new ReinError('SESSION_SEQ_MISMATCH', `session ${id}: expected seq ${expected}, got ${event.seq}; events must continue the log without gaps`, { details: { expected, got: event.seq } })
      }
      text += eventLine(event)
    }
    session.failure = undefined
    session.queue += text
    session.queued += events.length
    session.nextSeq += events.length
    session.timer ??= setTimeout(() => this.drain(session), this.batchDelayMs)
  }

  /** Resolves once everything appended before it is written and fsynced; rejects if a write failed. */
  async flush(id: string): Promise<void> {
    await this.settle(this.claimed(id), true)
  }

  /**
   * Resolves once everything appended before it is in the file, where a killed process cannot lose
   * it, without the fsync: the next flush makes it durable. Rejects if the write failed.
   */
  async write(id: string): Promise<void> {
    await this.settle(this.claimed(id), false)
  }

  private async settle(session: OpenSession, sync: boolean): Promise<void> {
    this.drain(session, sync)
    const epoch = session.epoch
    await session.tail
    const failure = session.failure ?? (session.epoch === epoch ? undefined : session.lastFailure)
    if (failure) throw failure
  }

  /** Flushes, closes the file and releases the lock; both happen even when the flush fails. */
  async close(id: string): Promise<void> {
    const session = this.claimed(id)
    let failure: unknown
    try {
      await this.flush(id)
    } catch (error) {
      failure = error
    }
    clearTimeout(session.timer)
    this.sessions.delete(id)
    try {
      if (session.fd !== undefined) closeSync(session.fd)
    } finally {
      this.locks.release(session.paths.lock)
    }
    if (failure !== undefined) throw failure
  }

  /** Closes every session still open here (each flushed, its file closed, its lock released), then removes the store's pid file. */
  async dispose(): Promise<void> {
    const failures: unknown[] = []
    for (const id of Array.from(this.sessions.keys())) {
      await this.close(id).catch((error: unknown) => { failures.push(error) })
    }
    this.locks.dispose()
    if (failures.length > 0) throw failures[0]
  }

  async load(id: string): Promise<LoadedSession> {
    const paths = sessionPaths(this.root, id)
    const content = await readLog(id, paths.file)
    try {
      const { header, events } = parseSessionFile(content, paths.file, id)
      return { header, events }
    } catch (error) {
      throw underOtherCase(this.root, id, paths.file, error)
    }
  }

  /**
   * `<root>/<id>.files`, absolute, made 0700 (with the root) if missing. Kept with the log; a path
   * there that is not a real folder (a link, a file) is refused rather than followed.
   */
  async folder(id: string): Promise<string> {
    const { folder } = sessionPaths(this.root, id)
    await this.ensureRoot()
    try {
      // Checked before ensurePrivateDir, which would narrow whatever a link there points to.
      const there = await lstat(folder).catch((error: unknown) => { if (errorCode(error) !== 'ENOENT') throw error })
      if (there && !there.isDirectory()) throw new Error('something other than a folder (a link or a file) is there')
      await ensurePrivateDir(folder)
    } catch (error) {
      throw ioError(`cannot make the folder of session ${id} (${folder})`, error)
    }
    return folder
  }

  /** `<root>/<id>.files`, absolute, as `folder(id)` makes it; nothing is touched on disk. */
  folderPath(id: string): string {
    return sessionPaths(this.root, id).folder
  }

  /** Every stored session, most recently active first, `running` while a live process holds it; foreign and corrupt files are skipped (told to `unreadable`). */
  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    let names: string[]
    try {
      names = await readdir(this.root)
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return []
      throw ioError(`cannot list ${this.root}`, error)
    }
    // A name that is no session id (a copy saved by hand) is told to `unreadable` by the INVALID_SESSION_ID
    // its paths throw below, not hidden; hidden files are no one's sessions (ids never start with a dot).
    const ids = names.filter((name) => name.endsWith('.jsonl') && !name.startsWith('.')).map((name) => name.slice(0, -'.jsonl'.length))
    // A few at a time: one open file per session at once would run out of descriptors (EMFILE)
    // with a few thousand sessions, and take those a live turn needs to write its log.
    const cache = await SummaryCache.read(this.root)
    const summaries = await mapAtMost(LIST_CONCURRENCY, ids, async (id) => {
      try {
        const paths = sessionPaths(this.root, id)
        const summary = await this.summary(id, paths.file, cache)
        return this.sessions.has(id) || isLockHeld(paths.lock) ? { ...summary, status: 'running' as const } : summary
      } catch (error) {
        options.unreadable?.(id, error)
        return undefined
      }
    })
    await cache.save(ids.filter((_id, index) => summaries[index] !== undefined))
    return summaries
      .filter((summary) => summary !== undefined)
      .sort((a, b) => time(b.lastActivity) - time(a.lastActivity) || a.id.localeCompare(b.id))
  }

  /** The log's summary as not running: what an earlier list made of it while it is unchanged, else read now. */
  private async summary(id: string, file: string, cache: SummaryCache): Promise<SessionSummary> {
    // Taken before the read: a log appended meanwhile is read again next time, never taken as summarized.
    const stamp = await stampOf(file)
    const known = stamp && cache.get(id, stamp)
    if (known) return known
    const summary = await withLog(id, file, (handle, stats) => {
      // `open` and `load` refuse a log longer than one read takes: not listed as resumable, though a line at a time it could be read.
      if (stats.size > MAX_READ_BYTES) throw tooLarge(file, undefined)
      return summarizeLog(handle, file, id)
    }).catch((error: unknown) => {
      throw underOtherCase(this.root, id, file, error)
    })
    if (stamp) cache.set(id, stamp, summary)
    return summary
  }

  private claimed(id: string): OpenSession {
    const session = this.sessions.get(id)
    if (!session) throw new ReinError('SESSION_NOT_OPEN', `session ${id} is not open in this store; create() or open() it first`, { details: { id } })
    return session
  }

  /** The root holds prompts and outputs: 0700, like every folder rein keeps content in. */
  private async ensureRoot(): Promise<void> {
    this.rootReady ??= ensurePrivateDir(this.root).catch((error: unknown) => {
      this.rootReady = undefined
      throw ioError(`cannot create the sessions folder ${this.root}`, error)
    })
    await this.rootReady
  }

  /** Claims the session's lock, making the root (and the pid file) again if it went away since this store made it. */
  private async claim(paths: SessionPaths, id: string): Promise<void> {
    await this.ensureRoot()
    try {
      this.locks.claim(paths.lock, id)
    } catch (error) {
      if (errorCode((error as { cause?: unknown }).cause) !== 'ENOENT') throw error
      this.rootReady = undefined
      this.locks.forget()
      await this.ensureRoot()
      this.locks.claim(paths.lock, id)
    }
    // What a killed process left (lock.ts) is there before this store's first claim; later claims
    // do not list a folder of many logs again.
    if (!this.swept) {
      this.swept = true
      sweepLeftovers(this.root)
    }
  }

  /** Moves the queue into a batch on the write chain; with `sync`, an empty one when a `write` left lines to fsync. */
  private drain(session: OpenSession, sync = true): void {
    clearTimeout(session.timer)
    session.timer = undefined
    if (session.queued === 0 && !(sync && session.syncDue)) return
    const batch: Batch = { epoch: session.epoch, fromSeq: session.nextSeq - session.queued, text: session.queue, count: session.queued, sync }
    // Batches run in order, and an fsync covers everything written before it: decided as they queue.
    session.syncDue = sync ? false : session.syncDue || batch.count > 0
    session.queue = ''
    session.queued = 0
    session.tail = session.tail.then(() => this.writeBatch(session, batch))
  }

  /** Writes one batch (publishing the file on the first); records a failure instead of throwing. */
  private async writeBatch(session: OpenSession, batch: Batch): Promise<void> {
    if (batch.epoch !== session.epoch) return
    const data = Buffer.from(batch.text)
    // One session open: fsync on the event loop (cheapest). More (subagents, a server): on the
    // thread pool, so one session's fsync does not stall the others' streams.
    const offLoop = this.sessions.size > 1
    try {
      if (session.fd === undefined) {
        const content = Buffer.concat([Buffer.from(headerLine(session.header)), data])
        session.fd = await publishFile(session.paths.file, content, offLoop)
        session.size = content.length
      } else {
        if (session.dirty) {
          ftruncateSync(session.fd, session.size)
          session.dirty = false
        } else if (fstatSync(session.fd).size !== session.size) {
          // Another process wrote since this one last did (its lock taken over, or deleted by hand):
          // writing at this one's length would land on its lines.
          throw writtenElsewhere(session.header.id, session.paths.file)
        }
        await appendDurably(fileTarget(session.fd, offLoop), session.size, data, batch.sync)
        session.size += data.length
      }
      session.written += batch.count
      // Whatever failed before is behind this batch now (a sync-only retry appends nothing to clear it).
      session.failure = undefined
    } catch (error) {
      // Nothing of this one's is on the file past `size` when another process's lines are.
      const theirs = isReinError(error, 'SESSION_LOCKED')
      if (session.fd !== undefined && !theirs) session.dirty = true
      // The lines earlier writes left are still to be fsynced.
      if (batch.sync) session.syncDue = true
      const failure = theirs || isReinError(error, 'SESSION_EXISTS') ? error : writeFailed(session.header.id, session.paths.file, batch, error)
      clearTimeout(session.timer)
      session.timer = undefined
      session.queue = ''
      session.queued = 0
      session.epoch++
      session.nextSeq = session.written
      session.failure = failure
      session.lastFailure = failure
    }
  }
}

function newSession(header: SessionHeader, paths: SessionPaths, fd: number | undefined, size: number, written: number): OpenSession {
  return { header, paths, fd, size, written, syncDue: false, nextSeq: written, queue: '', queued: 0, timer: undefined, tail: Promise.resolve(), epoch: 0, failure: undefined, lastFailure: undefined, dirty: false }
}

function exists(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined
  } catch (error) {
    throw ioError(`cannot check ${file}`, error)
  }
}

function time(iso: string): number {
  const value = Date.parse(iso)
  return Number.isNaN(value) ? 0 : value
}

/**
 * Where the file system ignores case (macOS, Windows), `<root>/ABC.jsonl` is session `abc`'s log,
 * whose header names `abc`: a mistyped id, not a damaged log. Said as not found, naming the stored
 * id, when the header's id differs from `id` only in case and names this very file; any other
 * error is returned as it is.
 */
function underOtherCase(root: string, id: string, file: string, error: unknown): unknown {
  const stored = isReinError(error, 'SESSION_CORRUPT') ? error.details?.headerId : undefined
  if (typeof stored !== 'string' || stored.toLowerCase() !== id.toLowerCase() || !isSessionId(stored)) return error
  if (!isSameFile(file, sessionPaths(root, stored).file)) return error
  return new ReinError('SESSION_NOT_FOUND', `no session ${id}: ${file} is the log of session ${stored}, found under ${id} because this file system ignores case; session ids are case-sensitive, so use ${stored}`, { details: { id, storedId: stored } })
}

/**
 * Whether two paths are names of one file, links not followed (a link made by hand is no sign the
 * file system ignores case); false when either cannot be looked at (the original error is then told).
 */
function isSameFile(a: string, b: string): boolean {
  try {
    const first = lstatSync(a, { throwIfNoEntry: false })
    const second = lstatSync(b, { throwIfNoEntry: false })
    return first !== undefined && second !== undefined && first.ino === second.ino && first.dev === second.dev
  } catch {
    return false
  }
}

function sessionExists(id: string, file: string): ReinError {
  return new ReinError('SESSION_EXISTS', `session ${id} already exists (${file}); create it under another id, or open() it`, { details: { id, file } })
}

/**
 * The log's bytes. Opened without blocking and checked to be a file first: a FIFO there would hold
 * the read (and `rein sessions`) until some writer came, a device would never end.
 */
async function readLog(id: string, file: string): Promise<Buffer> {
  return await withLog(id, file, (handle) => handle.readFile())
}

/** `read` of the log, opened as readLog says; errors said as a read's. */
async function withLog<T>(id: string, file: string, read: (handle: FileHandle, stats: Stats) => Promise<T>): Promise<T> {
  let handle: FileHandle
  try {
    handle = await openFile(file, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    throw readError(id, file, error)
  }
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw notALog(id, file, stats)
    return await read(handle, stats)
  } catch (error) {
    throw isReinError(error) ? error : readError(id, file, error)
  } finally {
    await handle.close().catch(() => {})
  }
}

/**
 * The log's summary as not running, read a line at a time: only a bounded part of it is ever held.
 * What `ctx.sessions` refuses at open and show must not be listed as resumable (nor trip the
 * summary): a core event without its shape is refused, but only once the whole log has parsed, so
 * a line that is no JSON at all is the error told, as `load` tells it.
 */
async function summarizeLog(handle: FileHandle, file: string, id: string): Promise<SessionSummary> {
  let summarizer: SessionSummarizer | undefined
  let misshapen: unknown
  await readLogLines(handle, file, id, {
    header: (header) => { summarizer = new SessionSummarizer(header) },
    event: (event, lossy) => {
      if (misshapen !== undefined) return
      // A lossy event lacks fields its line held: checked, it could be refused for what was only not kept.
      if (!lossy) {
        try {
          refuseMisshapenEvents([event], file, { file })
        } catch (error) {
          misshapen = error
          return
        }
      }
      summarizer!.add(event)
    },
  })
  if (misshapen !== undefined) throw misshapen
  return summarizer!.summary()
}

/** Something other than a file has the log's name: said as what it is, since permissions and free space have nothing to do with it. */
function notALog(id: string, file: string, stats: Stats): ReinError {
  if (stats.isDirectory()) return folderWhereLogGoes(id, file)
  return new ReinError('SESSION_IO_FAILED', `something other than a file stands where the log of session ${id} should be (${file}); move it out of the sessions folder`, { details: { id, file } })
}

function readError(id: string, file: string, error: unknown): ReinError {
  const code = errorCode(error)
  if (code === 'ENOENT') return new ReinError('SESSION_NOT_FOUND', `no session ${id}: ${file} does not exist ("rein sessions" lists the stored ones)`, { details: { id } })
  // Permissions and free space have nothing to do with it: something else has the log's name.
  if (code === 'EISDIR') return folderWhereLogGoes(id, file, error)
  if (isTooLarge(error)) return tooLarge(file, error)
  return ioError(`cannot read session ${id} (${file})`, error)
}

/** The most `readFile` reads (Node's limit, 2 GiB less a byte): `load` and `open` refuse a longer log. */
const MAX_READ_BYTES = 2 ** 31 - 1

/** Node reads at most 2 GiB in one call: a longer log cannot be loaded, whatever the folder's permissions. */
function isTooLarge(error: unknown): boolean {
  return errorCode(error) === 'ERR_FS_FILE_TOO_LARGE'
}

function tooLarge(file: string, cause: unknown): ReinError {
  return new ReinError('SESSION_TOO_LARGE', `${file} is larger than one read can take (2 GiB); it cannot be loaded — move it out of the sessions folder`, { cause, details: { file } })
}

function folderWhereLogGoes(id: string, file: string, cause?: unknown): ReinError {
  return new ReinError('SESSION_IO_FAILED', `a folder stands where the log of session ${id} should be (${file}); move it out of the sessions folder`, { ...(cause === undefined ? {} : { cause }), details: { id, file } })
}

/** How `open` opens a log: for reading and writing, failing (ELOOP) on a link rather than following it. */
const WRITE_WITHOUT_FOLLOWING = constants.O_RDWR | constants.O_NOFOLLOW

/**
 * Why `open` could not open the log for writing. A log that can be read (rein show shows it) but not
 * written is not "unreadable": said as what it is, with what to do; anything else as a read's.
 */
function openError(id: string, file: string, error: unknown): ReinError {
  const code = errorCode(error)
  if (code === 'ELOOP') {
    return new ReinError('SESSION_IO_FAILED', `a link stands where the log of session ${id} should be (${file}), and rein does not write through links: move the log itself into the sessions folder, or rein show ${id} reads it as it is`, { cause: error, details: { id, file } })
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new ReinError('SESSION_IO_FAILED', `the log of session ${id} (${file}) is not writable (${code}), and going on with a session appends to it: make it writable for your user (chmod u+w), or rein show ${id} reads it as it is`, { cause: error, details: { id, file } })
  }
  if (code === 'EROFS') {
    return new ReinError('SESSION_IO_FAILED', `the log of session ${id} (${file}) is on a read-only disk, and going on with a session appends to it: mount it read-write, or rein show ${id} reads it as it is`, { cause: error, details: { id, file } })
  }
  return readError(id, file, error)
}

/** `SESSION_LOCKED`: the log's length changed under this process (another wrote to it), so it writes no more to it. */
function writtenElsewhere(id: string, file: string): ReinError {
  return new ReinError('SESSION_LOCKED', `session ${id}: another process wrote to ${file} since this one last did (its lock was taken over or deleted), so nothing more is written here; stop one of them, then rein show ${id} to see what the log holds`, { details: { id, file } })
}

/**
 * A batch that did not reach the disk. The message is advice to an API caller; `details` name the
 * file and the errno (ENOSPC, EROFS…) for a caller that tells a person in its own terms (the CLI).
 */
function writeFailed(id: string, file: string, batch: Batch, cause: unknown): ReinError {
  const errno = errorCode(cause)
  const details = { id, fromSeq: batch.fromSeq, file, ...(errno === undefined ? {} : { errno }) }
  if (batch.count === 0) {
    return new ReinError('SESSION_WRITE_FAILED', `session ${id}: the events written before seq ${batch.fromSeq} could not be made durable (${messageOf(cause)}); flush again`, { cause, details })
  }
  const last = batch.fromSeq + batch.count - 1
  return new ReinError('SESSION_WRITE_FAILED', `session ${id}: events ${batch.fromSeq}-${last} were not written (${messageOf(cause)}); the file is as it was, so append them again from seq ${batch.fromSeq}`, { cause, details })
}

function ioError(what: string, cause: unknown): ReinError {
  return new ReinError('SESSION_IO_FAILED', `${what}: ${messageOf(cause)}; ${adviceFor(cause)}`, { cause })
}

/** What to do about a failed file-system call: a file where a folder goes is no matter of permissions or space. */
function adviceFor(cause: unknown): string {
  const code = errorCode(cause)
  // ENOTDIR: a path goes through a file; EEXIST: mkdir found a file where the folder goes.
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'a file stands where a folder of that path should be: move it away, or give the store another root'
  return 'check the folder\'s permissions and free space'
}

/** How many logs `list` reads at once. */
const LIST_CONCURRENCY = 16

/** `work` over `items`, at most `limit` running at once; results in the items' order. */
async function mapAtMost<T, R>(limit: number, items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  // One iterator shared by the workers: each takes the next item when it is free.
  const queue = items.entries()
  const worker = async () => {
    for (const [index, item] of queue) results[index] = await work(item)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
