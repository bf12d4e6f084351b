/**
 * Replaces a file's content all at once: the bytes go to a new temporary file beside it, which is
 * checked, synced and renamed over the target, all inside the target's folder held open. A rename
 * replaces a symbolic link at the target rather than following it, and the held folder cannot be
 * swapped for a link: nothing late can send the write, or its temporary file, outside.
 */

import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { lstat, mkdir, open, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { removeLeftByGoneProcesses, tempStem } from '@rein/base'
import { fromSystemError, fsError, systemCode } from './errors.ts'
import { confirmInside } from './open-file.ts'
import { within, type Resolved } from './workspace.ts'

/** Points tests can reach into; not for production use. */
export interface WriteHooks {
  /** After the first checks and the temporary file is written, before the last check and the rename. */
  afterCheck?(target: string): void | Promise<void>
  /** After the last check, right before the rename. */
  beforeRename?(target: string): void | Promise<void>
  /** Writes the bytes into the temporary file (a test makes it fail as a full disk would). */
  writeTemp?(handle: FileHandle, data: Uint8Array): Promise<void>
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/**
 * Writes `data` to `target.real`. `existing` is the target's stat at the check (absent for a new
 * file): its mode and owner are kept, and the write is refused if the target changed identity since.
 * Returns the new file's stat.
 */
export async function writeAtomically(target: Resolved, allowed: string, data: Uint8Array, existing: Stats | undefined, hooks: WriteHooks = {}): Promise<Stats> {
  const folder = dirname(target.real)
  const fail = (error: unknown) => fromSystemError(error, 'write', target.display)
  try {
    await mkdir(folder, { recursive: true })
  } catch (error) {
    throw fail(error)
  }
  const held = await holdFolder(folder).catch((error: unknown) => { throw fail(error) })
  try {
    if (!within(allowed, held.real)) throw moved(target)
    return await writeInFolder(held, target, allowed, data, existing, hooks)
  } finally {
    await held.close()
  }
}

/** The temporary file, its checks and the rename, all inside the held folder. */
async function writeInFolder(held: HeldFolder, target: Resolved, allowed: string, data: Uint8Array, existing: Stats | undefined, hooks: WriteHooks): Promise<Stats> {
  const fail = (error: unknown) => fromSystemError(error, 'write', target.display)
  const name = basename(target.real)
  const final = join(held.base, name)
  const temp = join(held.base, `${tempStem(name)}${process.pid}.${randomBytes(6).toString('hex')}.rein-tmp`)
  let handle: FileHandle
  try {
    handle = await open(temp, CREATE_FLAGS, existing ? existing.mode & 0o7777 : 0o666)
  } catch (error) {
    throw fail(error)
  }
  try {
    try {
      await confirmInside(handle, allowed, target.display)
      if (hooks.writeTemp) await hooks.writeTemp(handle, data)
      else await writeAll(handle, data)
      if (existing) await keepModeAndOwner(handle, existing)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await hooks.afterCheck?.(target.real)
    await oneAtATime(target.real, async () => {
      await checkUnchanged(target, held, final, existing)
      await hooks.beforeRename?.(target.real)
      await rename(temp, final)
    })
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw fail(error)
  }
  // Makes the rename itself durable; a file system that cannot sync a folder is not an error.
  await held.handle.sync().catch(() => {})
  // Written: what the file is now; a failure to say is the write's error, typed.
  return lstat(final).catch((error: unknown) => { throw fromSystemError(error, 'write', target.display) })
}

/** The last check and rename under way per target path: a second write to the path waits, then finds the file the first one made. */
const renaming = new Map<string, Promise<void>>()

/**
 * Runs `step` once every earlier one for `path` has ended. Without it two calls (a parent and its
 * subagent) that read one file could both pass the last check before either renamed: both would
 * say written, and one change would be gone. Another process can still race; see Limitations.
 */
async function oneAtATime(path: string, step: () => Promise<void>): Promise<void> {
  const before = renaming.get(path) ?? Promise.resolve()
  const mine = before.then(step)
  const tail = mine.catch(() => {})
  renaming.set(path, tail)
  try {
    await mine
  } finally {
    if (renaming.get(path) === tail) renaming.delete(path)
  }
}

/**
 * A folder held open. On Linux `base` names that very folder through /proc whatever its path points
 * to later, so a link swapped in for the folder (or a parent) cannot send the temporary file, the
 * rename or the cleanup outside; elsewhere `base` is the real path checked a moment before.
 */
interface HeldFolder {
  readonly handle: FileHandle
  /** Where the folder is now. */
  readonly real: string
  /** The prefix its entries are opened by. */
  readonly base: string
  close(): Promise<void>
}

async function holdFolder(folder: string): Promise<HeldFolder> {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    const viaProc = `/proc/self/fd/${handle.fd}`
    const real = await readlink(viaProc).catch(() => undefined)
    if (real !== undefined) return { handle, real, base: viaProc, close: () => handle.close() }
    const checked = await realpath(folder)
    return { handle, real: checked, base: checked, close: () => handle.close() }
  } catch (error) {
    await handle.close()
    throw error
  }
}

async function writeAll(handle: FileHandle, data: Uint8Array) {
  let written = 0
  while (written < data.length) {
    const { bytesWritten } = await handle.write(data, written, data.length - written)
    written += bytesWritten
  }
}

async function keepModeAndOwner(handle: FileHandle, existing: Stats) {
  const stat = await handle.stat()
  if (stat.uid !== existing.uid || stat.gid !== existing.gid) {
    // Only a privileged process can give the file back to its owner; its group, any member of it
    // (a shared file stays writable by the group). Whoever can do neither keeps their own.
    await handle.chown(existing.uid, existing.gid).catch(() => handle.chown(-1, existing.gid)).catch(() => {})
  }
  // After the chown: it clears setuid and setgid.
  await handle.chmod(existing.mode & 0o7777)
}

/** The last look before the rename: the folder is still inside and the target is the file that was checked. */
async function checkUnchanged(target: Resolved, held: HeldFolder, final: string, existing: Stats | undefined) {
  // The held folder is the one the rename goes to; it must not have been moved since it was checked.
  const folderNow = held.base === held.real ? await realpath(dirname(target.real)).catch(() => undefined) : await readlink(held.base).catch(() => undefined)
  if (folderNow !== held.real) throw moved(target)
  let now: Stats | undefined
  try {
    now = await lstat(final)
  } catch (error) {
    if (systemCode(error) !== 'ENOENT') throw error
  }
  if (now?.isSymbolicLink()) {
    throw fsError('PATH_OUTSIDE_WORKSPACE', `${target.display} was replaced by a symbolic link while it was being written; nothing was written`, { path: target.display })
  }
  const same = existing === undefined ? now === undefined : now !== undefined && now.ino === existing.ino && now.dev === existing.dev
  // Same file, but written to since it was loaded: replacing it would lose that write.
  const rewritten = same && existing !== undefined && now !== undefined && (now.size !== existing.size || now.mtimeMs !== existing.mtimeMs)
  if (!same || rewritten) {
    const what = now === undefined ? 'removed' : existing === undefined ? 'created' : rewritten ? 'changed' : 'replaced'
    throw fsError('FILE_CHANGED_SINCE_READ', `${target.display} was ${what} by something else while it was being written; nothing was written; read it again and retry`, { path: target.display })
  }
}

function moved(target: Resolved) {
  return fsError('PATH_OUTSIDE_WORKSPACE', `the folder of ${target.display} was moved or replaced by a link while it was being written; nothing was written`, { path: target.display })
}

const PID_PART = /^([1-9]\d*)\.[0-9a-f]{12}\.rein-tmp$/

/**
 * Removes the temporary files a write to `target` left when rein was killed between making one and
 * renaming it: only names this module makes for that file, and only those of a process that is
 * gone (another one, or this one, may be writing the file now). Best effort.
 */
export async function removeTempLeftovers(target: Resolved): Promise<void> {
  const stem = tempStem(basename(target.real))
  await removeLeftByGoneProcesses(dirname(target.real), (name) => {
    const pid = name.startsWith(stem) ? PID_PART.exec(name.slice(stem.length))?.[1] : undefined
    return pid === undefined ? undefined : Number(pid)
  })
}
