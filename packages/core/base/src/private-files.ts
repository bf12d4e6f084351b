/**
 * Files that can hold prompts or outputs are private to their user: 0600 files in 0700 folders.
 * Every rein package that writes such files makes its folders and opens its files through here.
 */

import { chmod, mkdir, open, type FileHandle } from 'node:fs/promises'
import type { OpenMode } from 'node:fs'

/** Mode of a file rein writes that can hold content: read and write for its owner only. */
export const PRIVATE_FILE_MODE = 0o600
/** Mode of a folder rein makes for such files. */
export const PRIVATE_DIR_MODE = 0o700

/**
 * Makes `path` (and any missing parent) a folder only its owner can enter. Folders rein creates get
 * 0700; an existing `path` is narrowed to 0700 too, since rein owns the folders it keeps files in.
 * Parents that already exist are left alone.
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE })
  await chmod(path, PRIVATE_DIR_MODE)
}

/** `fs.open` with the private file mode (the mode applies when the call creates the file). */
export function openPrivateFile(path: string, flags: OpenMode): Promise<FileHandle> {
  return open(path, flags, PRIVATE_FILE_MODE)
}
