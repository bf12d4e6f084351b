/**
 * The per-session lock file: `<id>.lock`, created exclusively, holding the owner's pid. A lock whose
 * process is gone is stale and taken over.
 */

import { open, readFile, unlink } from 'node:fs/promises'
import { ReinError } from '@rein/base'
import { errorCode, messageOf } from './fs-errors.ts'

const ATTEMPTS = 3

/** Claims `lock` for this process, or fails with `SESSION_LOCKED` naming the live holder. */
export async function claimLock(lock: string, id: string): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await tryCreate(lock)) return
    const holder = await readHolder(lock)
    if (holder === 'gone') continue
    if (holder === undefined) {
      throw new ReinError('SESSION_LOCKED', `session ${id} is locked by ${lock}, which names no process; delete that file if no rein process is using the session`, { details: { lock } })
    }
    if (isProcessAlive(holder)) {
      const who = holder === process.pid ? 'this process' : `process ${holder}`
      throw new ReinError('SESSION_LOCKED', `session ${id} is open in ${who} (pid ${holder}); close it there first, or delete ${lock} if that process is not rein`, { details: { pid: holder, lock } })
    }
    await unlink(lock).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw lockError(lock, error)
    })
  }
  throw new ReinError('SESSION_LOCKED', `session ${id}: ${lock} kept changing while rein tried to claim it; another process is claiming the session`, { details: { lock } })
}

/** Removes `lock` if this process still holds it. */
export async function releaseLock(lock: string): Promise<void> {
  if ((await readHolder(lock)) !== process.pid) return
  await unlink(lock).catch(() => undefined)
}

/** True when a process with this pid exists, including one this user may not signal. */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === 'EPERM'
  }
}

async function tryCreate(lock: string): Promise<boolean> {
  let handle
  try {
    handle = await open(lock, 'wx')
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false
    throw lockError(lock, error)
  }
  try {
    await handle.writeFile(`${process.pid}\n`)
  } catch (error) {
    await handle.close()
    await unlink(lock).catch(() => undefined)
    throw lockError(lock, error)
  }
  await handle.close()
  return true
}

/** The holder's pid; undefined when the file names none; 'gone' when it vanished meanwhile. */
async function readHolder(lock: string): Promise<number | undefined | 'gone'> {
  let text
  try {
    text = await readFile(lock, 'utf8')
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return 'gone'
    throw lockError(lock, error)
  }
  const pid = Number(text.trim())
  // pid 0 and negatives would address process groups in process.kill.
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

function lockError(lock: string, cause: unknown): ReinError {
  return new ReinError('SESSION_IO_FAILED', `cannot use the lock file ${lock}: ${messageOf(cause)}; check the sessions folder's permissions and free space`, { cause, details: { lock } })
}
