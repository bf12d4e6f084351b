/** Acting on one planned file: write its old content or remove it, never following a symbolic link. */

import { randomUUID } from 'node:crypto'
import { lstat, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { isMissing } from './plan.ts'

/**
 * Puts `content` at `file` by a temp file in the same folder and a rename: a reader (or a kill -9)
 * sees the old content or the new, never part of it, and the rename replaces a link that appeared
 * in the meantime instead of writing through it. Keeps the mode of the file it replaces.
 */
export async function writeAtomically(file: string, content: Uint8Array): Promise<void> {
  const mode = await existingMode(file)
  const temp = join(dirname(file), `.${basename(file)}.rein-rewind-${randomUUID()}.tmp`)
  const handle = await open(temp, 'wx', mode ?? 0o666)
  try {
    try {
      // writeFile loops until every byte is written, or throws.
      await handle.writeFile(content)
      if (mode !== undefined) await handle.chmod(mode)
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
