/**
 * The per-session lock file: `<id>.lock`, holding the owner's pid. It appears whole — the pid is
 * written to a temporary file that is then hard-linked into place — so a live owner's lock is never
 * empty. A lock whose owner cannot be shown alive (its process is gone, or the file names no
 * process, e.g. one left empty by an older rein killed mid-write) is stale and taken over.
 */

import { randomUUID } from 'node:crypto'
import { link, readFile, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { ReinError, isZombie, openPrivateFile } from '@rein/base'
import { errorCode, messageOf } from './fs-errors.ts'

const ATTEMPTS = 3

/** Claims `lock` for this process, or fails with `SESSION_LOCKED` naming the live holder. */
export async function claimLock(lock: string, id: string): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await tryCreate(lock)) return
    const holder = await readHolder(lock)
    if (holder === 'gone') continue
    if (holder !== 'stale' && isProcessAlive(holder)) {
      const who = holder === process.pid ? 'this process' : `process ${holder}`
      throw new ReinError('SESSION_LOCKED', `session ${id} is open in ${who} (pid ${holder}); close it there first, or delete ${lock} if that process is not rein`, { details: { pid: holder, lock } })
    }
    await unlink(lock).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw lockError(lock, error)
    })
  }
  throw new ReinError('SESSION_LOCKED', `session ${id}: ${lock} kept changing while rein tried to claim it; another process is claiming the session`, { details: { lock } })
}

/** True when `lock` names a process that is alive: the session is open somewhere. */
export async function isLockHeld(lock: string): Promise<boolean> {
  const holder = await readHolder(lock).catch(() => 'stale' as const)
  return typeof holder === 'number' && isProcessAlive(holder)
}

/** Removes `lock` if this process still holds it. */
export async function releaseLock(lock: string): Promise<void> {
  if ((await readHolder(lock)) !== process.pid) return
  await unlink(lock).catch(() => undefined)
}

/**
 * True when a process with this pid exists, including one this user may not signal — but not a
 * zombie: a killed rein whose parent has not reaped it yet holds nothing (where /proc says so).
 */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return errorCode(error) === 'EPERM'
  }
  return !isZombie(pid)
}


/** Writes our pid to a temporary file, then links it to `lock`: false if a lock is already there. */
async function tryCreate(lock: string): Promise<boolean> {
  const temp = join(dirname(lock), `.${basename(lock)}.${process.pid}.${randomUUID()}.tmp`)
  try {
    const handle = await openPrivateFile(temp, 'wx')
    try {
      await handle.writeFile(`${process.pid}\n`)
    } finally {
      await handle.close()
    }
    await link(temp, lock)
    return true
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw lockError(lock, error)
  } finally {
    await unlink(temp).catch(() => undefined)
  }
}

/** The holder's pid; 'stale' when the file names no process; 'gone' when it vanished meanwhile. */
async function readHolder(lock: string): Promise<number | 'stale' | 'gone'> {
  let text
  try {
    text = await readFile(lock, 'utf8')
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
