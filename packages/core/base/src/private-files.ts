/**
 * Files that can hold prompts or outputs are private to their user: 0600 files in 0700 folders.
 * Every rein package that writes such files makes its folders and opens its files through here.
 */

import { chmod, mkdir, open, stat, type FileHandle } from 'node:fs/promises'
import type { OpenMode } from 'node:fs'

/** Mode of a file rein writes that can hold content: read and write for its owner only. */
export const PRIVATE_FILE_MODE = 0o600
/** Mode of a folder rein makes for such files. */
export const PRIVATE_DIR_MODE = 0o700

const STICKY = 0o1000

/**
 * Makes `path` (and any missing parent) a folder only its owner can enter: folders rein creates
 * get 0700. An existing `path` is narrowed to 0700 only when it is this user's own and not a
 * shared folder (sticky, like /tmp) — a folder someone pointed rein at is otherwise left as it is.
 * Parents that already exist are never touched.
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  const created = await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE })
  if (created !== undefined) return
  const { mode, uid } = await stat(path)
  const own = typeof process.getuid !== 'function' || uid === process.getuid()
  if (own && (mode & STICKY) === 0 && (mode & 0o077) !== 0) await chmod(path, PRIVATE_DIR_MODE)
}

/** `fs.open` with the private file mode (the mode applies when the call creates the file). */
export function openPrivateFile(path: string, flags: OpenMode): Promise<FileHandle> {
  return open(path, flags, PRIVATE_FILE_MODE)
}

/** Narrows a file rein owns and writes to (one an older rein may have made readable to others) to 0600. */
export async function makeFilePrivate(handle: FileHandle): Promise<void> {
  const { mode } = await handle.stat()
  if ((mode & 0o077) !== 0) await handle.chmod(PRIVATE_FILE_MODE)
}
