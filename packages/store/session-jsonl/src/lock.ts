/**
 * The per-session lock file: `<id>.lock`, holding the owner's pid. It appears whole — the pid is
 * written to a temporary file that is then hard-linked into place — so a live owner's lock is never
 * empty. A lock whose owner cannot be shown alive (its process is gone, or the file names no
 * process, e.g. one left empty by an older rein killed mid-write) is stale and taken over.
 *
 * What a killed rein leaves is swept by a store's first successful claim in the folder (`sweepLeftovers`): temporary pid files and logs being published
 * (killed inside a claim) and stale locks — also those no claim of their own session would ever take
 * over: a session whose log was never written (killed between `create` and the first flush), or a
 * subagent's finished session, which its parent only reads.
 */

import { randomUUID } from 'node:crypto'
import { closeSync, fstatSync, linkSync, lstatSync, openSync, readFileSync, readdirSync, unlinkSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ReinError, isProcessAlive, leftByGoneProcesses } from '@rein/base'
import { quietly, writeNewPrivateFile } from './durable-write.ts'
import { errorCode, messageOf } from './fs-errors.ts'

const ATTEMPTS = 3

/**
 * A temporary file as this store names them, capturing the pid of the process that wrote it: a
 * lock's pid file (`tryCreate`) or a log being published (durable-write.ts `publishFile`).
 */
const TEMP_NAME = /^\..+\.(?:lock|jsonl)\.([1-9]\d*)\.[0-9a-f-]{36}\.tmp$/

/*
 * Synchronous, like the log's writes (durable-write.ts): a handful of small calls per session,
 * each cheaper than a thread-pool round trip.
 */

/** Claims `lock` for this process, or fails with `SESSION_LOCKED` naming the live holder. */
export function claimLock(lock: string, id: string): void {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (tryCreate(lock)) return
    const holder = readHolder(lock)
    if (holder === 'gone') continue
    if (holder !== 'stale' && isProcessAlive(holder)) {
      const who = holder === process.pid ? 'this process' : `process ${holder}`
      throw new ReinError('SESSION_LOCKED', `session ${id} is open in ${who} (pid ${holder}); close it there first, or delete ${lock} if that process is not rein`, { details: { pid: holder, lock } })
    }
    try {
      unlinkSync(lock)
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw lockError(lock, error)
    }
  }
  throw new ReinError('SESSION_LOCKED', `session ${id}: ${lock} kept changing while rein tried to claim it; another process is claiming the session`, { details: { lock } })
}

/** True when `lock` names a process that is alive: the session is open somewhere. */
export function isLockHeld(lock: string): boolean {
  let holder: ReturnType<typeof readHolder>
  try {
    holder = readHolder(lock)
  } catch {
    return false
  }
  return typeof holder === 'number' && isProcessAlive(holder)
}

/** Removes `lock` if this process still holds it. */
export function releaseLock(lock: string): void {
  if (readHolder(lock) !== process.pid) return
  quietly(() => unlinkSync(lock))
}

/** Writes our pid to a temporary file, then links it to `lock`: false if a lock is already there. */
function tryCreate(lock: string): boolean {
  const temp = join(dirname(lock), `.${basename(lock)}.${process.pid}.${randomUUID()}.tmp`)
  try {
    writeNewPrivateFile(temp, `${process.pid}\n`)
    linkSync(temp, lock)
    return true
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw lockError(lock, error)
  } finally {
    quietly(() => unlinkSync(temp))
  }
}

/**
 * Removes what dead processes left in the folder: temporary pid files, and locks whose holder is
 * gone. A live process's files are left alone (it may be claiming now). A stale lock is removed only
 * while it is still the file that was read: a claimer taking it over meanwhile links a new file.
 */
export function sweepLeftovers(folder: string): void {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch {
    return
  }
  for (const name of leftByGoneProcesses(names, writerOfTemp)) quietly(() => unlinkSync(join(folder, name)))
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
 * Unlinks `lock` if the process it names is gone and the name still points to the file read. The
 * file stays open until that comparison: an inode cannot be freed and given to a new lock meanwhile.
 */
function removeIfStale(lock: string): void {
  const fd = openSync(lock, 'r')
  try {
    const read = fstatSync(fd)
    const pid = Number(readFileSync(fd, 'utf8').trim())
    const holder = Number.isInteger(pid) && pid > 0 ? pid : 'stale'
    if (holder !== 'stale' && (holder === process.pid || isProcessAlive(holder))) return
    const now = lstatSync(lock)
    if (now.ino === read.ino && now.dev === read.dev) unlinkSync(lock)
  } finally {
    closeSync(fd)
  }
}

/** The holder's pid; 'stale' when the file names no process; 'gone' when it vanished meanwhile. */
function readHolder(lock: string): number | 'stale' | 'gone' {
  let text
  try {
    text = readFileSync(lock, 'utf8')
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'gone'
    throw lockError(lock, error)
  }
  const pid = Number(text.trim())
  // pid 0 and negatives would address process groups in process.kill.
  return Number.isInteger(pid) && pid > 0 ? pid : 'stale'
}

function lockError(lock: string, cause: unknown): ReinError {
  return new ReinError('SESSION_IO_FAILED', `cannot use the lock file ${lock}: ${messageOf(cause)}; check the sessions folder's permissions and free space`, { cause, details: { lock } })
}
