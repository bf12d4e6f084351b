/** Acting on one planned file: write its old content or remove it, never following a symbolic link. */

import { randomUUID } from 'node:crypto'
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { removeLeftByGoneProcesses, tempStem } from '@rein/base'
import { isMissing } from './plan.ts'

/**
 * The mode of a file rewind creates when no record kept the one it had: its content may be a
 * secret (a deleted `.env`), so only the owner may read it until a person widens it.
 */
const PRIVATE_FILE_MODE = 0o600
/**
 * The mode of a parent folder rewind creates again (the turn deleted or moved it), less what the
 * umask removes: only an empty folder's own record keeps its mode, and what goes back in may be a secret.
 */
export const PRIVATE_FOLDER_MODE = 0o700

/**
 * Puts `content` at `file` by a temp file in the same folder and a rename: a reader (or a kill -9)
 * sees the old content or the new, never part of it, and the rename replaces a link that appeared
 * in the meantime instead of writing through it. An existing regular file keeps its own mode; a
 * file this creates gets `mode` (the recorded one, umask not applied), else 0600. Missing parent
 * folders are created (see `PRIVATE_FOLDER_MODE`).
 */
export async function writeAtomically(file: string, content: Uint8Array, mode?: number): Promise<void> {
  const target = await existingMode(file) ?? mode ?? PRIVATE_FILE_MODE
  const temp = join(dirname(file), `${tempPrefix(file)}${randomUUID()}.tmp`)
  // Private while the bytes go in; the mode is set (chmod: exactly, whatever the umask) before the rename shows it.
  const handle = await openTemp(temp)
  try {
    try {
      // writeFile loops until every byte is written, or throws.
      await handle.writeFile(content)
      await handle.chmod(target)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
}

/** Creates the temp file, and the folders above it when the turn removed them. */
async function openTemp(temp: string) {
  try {
    return await open(temp, 'wx', PRIVATE_FILE_MODE)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(dirname(temp), { recursive: true, mode: PRIVATE_FOLDER_MODE })
  return open(temp, 'wx', PRIVATE_FILE_MODE)
}

/**
 * How this module names the temporary copies of `file`, up to their random part: with the pid of the
 * process writing, so a leftover is told from a copy another rewind is writing now.
 */
function tempPrefix(file: string): string {
  return `${tempStem(basename(file))}${TEMP_MARK}${process.pid}.`
}

const TEMP_MARK = 'rein-rewind-'
const TEMP_TAIL = /^([1-9]\d*)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/

/**
 * Removes the temporary copies of `files` (all in `folder`) that a rewind killed between their
 * write and their rename left beside them: only names this module makes, and only those of a process
 * that is gone. One listing per folder. Best effort: what cannot be listed or removed stays.
 */
export async function removeLeftovers(folder: string, files: ReadonlySet<string>): Promise<void> {
  const stems = new Set([...files].map(tempStem))
  await removeLeftByGoneProcesses(folder, (name) => {
    const at = name.lastIndexOf(TEMP_MARK)
    const pid = at > 0 ? TEMP_TAIL.exec(name.slice(at + TEMP_MARK.length))?.[1] : undefined
    return pid !== undefined && stems.has(name.slice(0, at)) ? Number(pid) : undefined
  })
}

/** Removes `file` (a link itself, never its target); an already absent file is fine. */
export async function removeFile(file: string): Promise<void> {
  try {
    await unlink(file)
  } catch (error) {
    if (!isMissing(error)) throw error
  }
}

async function existingMode(file: string): Promise<number | undefined> {
  try {
    const stats = await lstat(file)
    return stats.isFile() ? stats.mode & 0o7777 : undefined
  } catch (error) {
    if (isMissing(error)) return undefined
    throw error
  }
}
