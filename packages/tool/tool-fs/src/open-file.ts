/**
 * Opens a checked path for reading without following a link swapped in after the check, refuses
 * anything but a regular file (a FIFO is opened non-blocking, so it cannot hang the call), and
 * confirms through /proc where the opened file really is.
 */

import { constants, type Stats } from 'node:fs'
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises'
import { fromSystemError, fsError, systemCode } from './errors.ts'
import { within, type Resolved } from './workspace.ts'

/** Read without following a link, and without blocking on a FIFO. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** An open regular file; the caller closes `handle`. */
export interface OpenFile {
  handle: FileHandle
  stat: Stats
}

export async function openRegularFile(resolved: Resolved, allowed: string): Promise<OpenFile> {
  let handle: FileHandle
  try {
    handle = await open(resolved.real, READ_FLAGS)
  } catch (error) {
    // ELOOP with O_NOFOLLOW: the checked file became a symbolic link after the check.
    if (systemCode(error) === 'ELOOP') throw fsError('PATH_OUTSIDE_WORKSPACE', `${resolved.display} changed into a symbolic link while it was being opened; nothing was read`, { path: resolved.display }, error)
    // A socket cannot be opened at all (ENXIO): say what it is, as for a FIFO or a device.
    if (systemCode(error) === 'ENXIO') {
      const info = await lstat(resolved.real).catch(() => undefined)
      if (info && !info.isFile()) throw notRegular(resolved.display, info)
    }
    throw fromSystemError(error, 'read', resolved.display)
  }
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) throw notRegular(resolved.display, stat)
    await confirmInside(handle, allowed, resolved.display)
    return { handle, stat }
  } catch (error) {
    await handle.close()
    throw fromSystemError(error, 'read', resolved.display)
  }
}

/** `NOT_A_REGULAR_FILE`, saying what the path is instead. */
function notRegular(display: string, stat: Stats) {
  const kind = stat.isDirectory() ? 'a folder; use glob to list what is in it'
    : stat.isFIFO() ? 'a named pipe (FIFO), not a file'
    : stat.isCharacterDevice() || stat.isBlockDevice() ? 'a device, not a file'
    : stat.isSocket() ? 'a socket, not a file'
    : 'not a regular file'
  return fsError('NOT_A_REGULAR_FILE', `${display} is ${kind}`, { path: display })
}

/**
 * Where an open file really is, from /proc/self/fd: immune to a folder swapped for a link between
 * the check and the open. Where /proc is missing the check above it stands alone.
 */
export async function confirmInside(handle: FileHandle, allowed: string, display: string): Promise<void> {
  let actual: string
  try {
    actual = await readlink(`/proc/self/fd/${handle.fd}`)
  } catch {
    return
  }
  if (!within(allowed, actual)) {
    throw fsError('PATH_OUTSIDE_WORKSPACE', `${display} was moved outside the workspace while it was being opened; nothing was read or written`, { path: display })
  }
}
