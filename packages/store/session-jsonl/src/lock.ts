/**
 * The per-session lock file: `<id>.lock`, holding the owner's pid. A store writes its pid once, to a
 * hidden pid file of its own in the folder (`LockOwner`), and each lock it claims is a hard link to
 * that file. So a lock appears whole (a live owner's lock is never empty), a claim allocates no
 * inode, and a release frees none: where ext4 runs without a journal, each inode allocation scans
 * the inodes freed in the last minutes, so an inode made and freed per session made every later
 * file slower to create. A lock whose owner cannot be shown alive (its process is gone, or the file names no
 * process, e.g. one left empty by an older rein killed mid-write) is stale and taken over.
 *
 * What a killed rein leaves is swept by a store's first successful claim in the folder (`sweepLeftovers`):
 * pid files and logs being published (killed inside a claim, or ended without disposing the store) and
 * stale locks — also those no claim of their own session would ever take over: a session whose log
 * was never written (killed between `create` and the first flush), or a subagent's finished
 * session, which its parent only reads.
 */

import { randomUUID } from 'node:crypto'
import { closeSync, constants, fstatSync, linkSync, lstatSync, openSync, readSync, readdirSync, unlinkSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { isProcessAlive, isReinError, leftByGoneProcesses, messageOf, ReinError } from '@rein/base'
import { quietly, writeNewPrivateFile } from './durable-write.ts'
import { errorCode } from './fs-errors.ts'

const ATTEMPTS = 3
/** How a store's pid file is named, before its pid. */
const PID_FILE_PREFIX = '.owner.lock.'

/**
 * A temporary file as this store names them, capturing the pid of the process that wrote it: a
 * store's pid file (`LockOwner`; older rein wrote one per claim), a log being published
 * (durable-write.ts `publishFile`) or the list's summaries being saved (summary-cache.ts).
 */
const TEMP_NAME = /^\..+\.(?:lock|jsonl|json)\.([1-9]\d*)\.[0-9a-f-]{36}\.tmp$/

/*
 * Synchronous, like the log's writes (durable-write.ts): a handful of small calls per session,
 * each cheaper than a thread-pool round trip.
 */

/** A store's claims in one folder: its pid file, which every lock it holds is a hard link to. */
export class LockOwner {
  /** The pid file, once written; undefined until the first claim and after `dispose`. */
  private file: string | undefined
  /** Its device and inode, as `livePidFiles` holds it. */
  private key: string | undefined

  constructor(private readonly folder: string) {}

  /**
   * Claims `lock` for this process, or fails with `SESSION_LOCKED` naming the live holder. Fails
   * with `SESSION_IO_FAILED` caused by ENOENT when the folder or the pid file is gone; after
   * `forget`, the next claim writes the pid file again.
   */
  claim(lock: string, id: string): void {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (this.tryLink(lock)) return
      const holder = readHolder(lock)
      if (holder === 'gone') continue
      if (holder !== 'stale' && isHolderAlive(lock, holder)) {
        // Another process is named by its pid once; this one by what it is, with its pid.
        const who = holder === process.pid ? `this process (pid ${holder})` : `process ${holder}`
        throw new ReinError('SESSION_LOCKED', `session ${id} is open in ${who}; close it there first, or delete ${lock} if that process is not rein`, { details: { pid: holder, lock } })
      }
      // Removed only while it is still the stale file: another claimer that took it over meanwhile
      // linked a new one, which must not be removed (two writers would share the log).
      try {
        removeIfStale(lock)
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw lockError(lock, error)
      }
    }
    throw new ReinError('SESSION_LOCKED', `session ${id}: ${lock} kept changing while rein tried to claim it; another process is claiming the session`, { details: { lock } })
  }

  /**
   * Removes `lock` if this store still holds it. Two lstats when it is a link to this store's pid
   * file and that file still stands (so its inode is not one reused since): the case of every lock
   * it claimed. Otherwise the pid the lock names decides, as for a lock whose pid file it forgot.
   */
  release(lock: string): void {
    if (!this.holds(lock)) return releaseLock(lock)
    quietly(() => unlinkSync(lock))
  }

  private holds(lock: string): boolean {
    if (this.file === undefined || this.key === undefined) return false
    try {
      const stats = lstatSync(lock, { throwIfNoEntry: false })
      const own = stats && fileKey(stats) === this.key ? lstatSync(this.file, { throwIfNoEntry: false }) : undefined
      return own !== undefined && fileKey(own) === this.key
    } catch {
      return false
    }
  }

  /** Drops the pid file without removing it: it (or its folder) was found gone, so the next claim writes another. */
  forget(): void {
    if (this.key !== undefined) livePidFiles.delete(this.key)
    this.file = undefined
    this.key = undefined
  }

  /** Removes the pid file's name. Locks still held stay valid: each is a name of its own for the same file. */
  dispose(): void {
    const file = this.file
    if (this.key !== undefined) livePidFiles.delete(this.key)
    this.file = undefined
    this.key = undefined
    if (file !== undefined) quietly(() => unlinkSync(file))
  }

  /** Links the pid file to `lock`: false if a lock is already there. */
  private tryLink(lock: string): boolean {
    // Outside the try: a pid file that cannot be written says so itself, not wrapped a second time.
    const pidFile = this.pidFile(lock)
    try {
      linkSync(pidFile, lock)
      return true
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false
      throw lockError(lock, error)
    }
  }

  private pidFile(lock: string): string {
    if (this.file === undefined) {
      const file = join(this.folder, `${PID_FILE_PREFIX}${process.pid}.${randomUUID()}.tmp`)
      try {
        writeNewPrivateFile(file, `${process.pid}\n`)
      } catch (error) {
        throw lockError(lock, error)
      }
      this.file = file
      this.key = fileKey(lstatSync(file))
      livePidFiles.add(this.key)
    }
    return this.file
  }
}

/**
 * The pid files of this process's stores, by device and inode: a lock naming this pid is held here
 * only when it is one of them (a restarted container can give rein the pid an earlier run had, and
 * that run's locks are stale). Not by path: two stores may name one folder two ways (a link). Shared
 * by every copy of this module loaded in the process.
 */
const livePidFiles: Set<string> = ((globalThis as Record<symbol, unknown>)[Symbol.for('rein.session-jsonl.live-pid-files')] ??= new Set<string>()) as Set<string>

function fileKey(stats: { dev: number; ino: number }): string {
  return `${stats.dev}:${stats.ino}`
}

/** Whether the process `lock` names holds it: alive, and for this pid, linked to one of this process's pid files. */
function isHolderAlive(lock: string, holder: number): boolean {
  return holder === process.pid ? isLinkedHere(lock) : isProcessAlive(holder)
}

function isLinkedHere(lock: string): boolean {
  const stats = lstatSync(lock, { throwIfNoEntry: false })
  return stats !== undefined && livePidFiles.has(fileKey(stats))
}

/** True when `lock` names a process that is alive: the session is open somewhere. */
export function isLockHeld(lock: string): boolean {
  let holder: ReturnType<typeof readHolder>
  try {
    holder = readHolder(lock)
  } catch {
    return false
  }
  return typeof holder === 'number' && isHolderAlive(lock, holder)
}

/** Removes `lock` if this process still holds it. */
function releaseLock(lock: string): void {
  if (readHolder(lock) !== process.pid) return
  quietly(() => unlinkSync(lock))
}

/**
 * Removes what dead processes left in the folder: pid files and logs being published, and locks
 * whose holder is gone. A live process's files are left alone (it may be claiming now). A stale
 * lock is removed only while it is still the file that was read: a claimer taking it over
 * meanwhile links another file.
 */
export function sweepLeftovers(folder: string): void {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch {
    return
  }
  for (const name of leftByGoneProcesses(names, writerOfTemp)) quietly(() => unlinkSync(join(folder, name)))
  // An earlier run that had this pid (a restarted container) left pid files no store here owns.
  for (const name of names) {
    const file = join(folder, name)
    if (name.startsWith(PID_FILE_PREFIX) && writerOfTemp(name) === process.pid && !isLinkedHere(file)) quietly(() => unlinkSync(file))
  }
  for (const name of names) {
    if (name.endsWith('.lock') && !name.startsWith('.')) quietly(() => removeIfStale(join(folder, name)))
  }
}

/** The pid a temporary file of this store names (see TEMP_NAME); undefined for any other name. */
function writerOfTemp(name: string): number | undefined {
  const temp = TEMP_NAME.exec(name)
  return temp ? Number(temp[1]) : undefined
}

/**
 * Unlinks `lock` if the process it names is gone and the name still points to the file read: a
 * claimer taking the lock over meanwhile links its own pid file, another inode (the gone process
 * links its pid file to nothing more). The file stays open until that comparison, so its inode
 * cannot be freed and given to a new pid file meanwhile.
 */
function removeIfStale(lock: string): void {
  let fd
  try {
    fd = openSync(lock, READ_WITHOUT_WAITING)
  } catch (error) {
    if (errorCode(error) !== 'ELOOP') throw error
    removeLink(lock)
    return
  }
  try {
    const read = fstatSync(fd)
    const holder = holderIn(fd, read, lock)
    if (holder !== 'stale' && isHolderAlive(lock, holder)) return
    const now = lstatSync(lock)
    if (now.ino === read.ino && now.dev === read.dev) unlinkSync(lock)
  } finally {
    closeSync(fd)
  }
}

/** Unlinks `lock` while it is still a link: the link's name goes, never what it points to. */
function removeLink(lock: string): void {
  if (lstatSync(lock).isSymbolicLink()) unlinkSync(lock)
}

/**
 * How a lock is opened to be read: a FIFO left under a lock's name would otherwise block the open
 * (on the event loop: these calls are synchronous) until a writer came. Read so, it reads as empty: stale.
 * Never through a link (ELOOP): rein makes none, and one to a device would be read without end.
 */
const READ_WITHOUT_WAITING = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/** The holder's pid; 'stale' when the file names no process; 'gone' when it vanished meanwhile. */
function readHolder(lock: string): number | 'stale' | 'gone' {
  let fd
  try {
    fd = openSync(lock, READ_WITHOUT_WAITING)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ENOENT') return 'gone'
    // A link is no lock rein wrote: stale, and its name is removed (removeIfStale).
    if (code === 'ELOOP') return 'stale'
    throw lockError(lock, error)
  }
  try {
    return holderIn(fd, fstatSync(fd), lock)
  } catch (error) {
    throw isReinError(error) ? error : lockError(lock, error)
  } finally {
    closeSync(fd)
  }
}

/** The most of a lock that is read: a pid and a newline, with room to spare; longer is no pid (stale). */
const PID_BYTES = 32

/**
 * The pid in the open lock `fd`; 'stale' when it names no process, or is no file (a FIFO, a device:
 * not read, as a device would never end). A folder cannot be removed as a lock is: said so.
 */
function holderIn(fd: number, stats: Stats, lock: string): number | 'stale' {
  if (stats.isDirectory()) {
    throw new ReinError('SESSION_IO_FAILED', `a folder stands where a session's lock goes (${lock}); move it away`, { details: { lock } })
  }
  if (!stats.isFile()) return 'stale'
  // A pid is a few digits: a big file under a lock's name is read no further than that.
  const head = Buffer.alloc(PID_BYTES)
  const pid = Number(head.toString('utf8', 0, readSync(fd, head, 0, PID_BYTES, 0)).trim())
  // pid 0 and negatives would address process groups in process.kill.
  return Number.isInteger(pid) && pid > 0 ? pid : 'stale'
}

function lockError(lock: string, cause: unknown): ReinError {
  return new ReinError('SESSION_IO_FAILED', `cannot use the lock file ${lock}: ${messageOf(cause)}; check the sessions folder's permissions and free space`, { cause, details: { lock } })
}
