/** Acting on one planned file: write its old content or remove it, never following a symbolic link. */

import { randomUUID } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join, relative, sep } from 'node:path'
import { ReinError, listedPath, removeLeftByGoneProcesses, shellWord, tempStem, thrownMessage } from '@rein/base'
import { isMissing } from './plan.ts'
import type { PlanItem } from './types.ts'

/**
 * The mode of a file rewind creates when no record kept the one it had: its content may be a
 * secret (a deleted `.env`), so only the owner may read it until a person widens it.
 */
const PRIVATE_FILE_MODE = 0o600
/**
 * A parent folder rewind creates again (the turn deleted or moved it) gets what `mkdir -p` gives:
 * 0777 less the umask. No record keeps such a folder's mode (only an empty folder's own does), and
 * the file that goes back in is kept private by its own mode (the recorded one, else 0600).
 */
const MKDIR_P = { recursive: true } as const

/** A mode a rewind gives back: a file that has `from` (what an undone chmod left) gets `to`; any other is someone's since, and stays. */
export interface ModeBack {
  readonly from: number
  readonly to: number
}

/**
 * Puts `content` at `file` by a temp file in the same folder and a rename: a reader (or a kill -9)
 * sees the old content or the new, never part of it, and the rename replaces a link that appeared
 * in the meantime instead of writing through it. An existing regular file keeps its own mode (but
 * `back.from` becomes `back.to`); a file this creates gets `mode` (the recorded one, umask not
 * applied), else 0600. Missing parent folders are created (see `MKDIR_P`). Resolves
 * with the mode the file has then.
 */
export async function writeAtomically(file: string, content: Uint8Array, mode?: number, back?: ModeBack): Promise<number> {
  const existing = await existingMode(file)
  const target = existing === undefined ? mode ?? PRIVATE_FILE_MODE : existing === back?.from ? back.to : existing
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
  return target
}

/**
 * Gives the regular file at `file` the mode `back.to` while it has `back.from`, through a handle
 * that refuses a link put there since the plan; resolves with the mode it has then (another one
 * is a person's chmod since the plan: left). A file its owner may not read cannot be opened for
 * this (as anyone but root): it fails with EACCES, and keeps its mode.
 */
export async function giveModeBack(file: string, back: ModeBack): Promise<number> {
  // Non-blocking: a FIFO put there meanwhile opens at once (and is refused below), not when a writer comes.
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new Error('is no longer a regular file; left as it is')
    const mode = stats.mode & 0o7777
    if (mode !== back.from) return mode
    await handle.chmod(back.to)
    return back.to
  } finally {
    await handle.close()
  }
}

/** Creates the temp file, and the folders above it when the turn removed them. */
async function openTemp(temp: string) {
  try {
    return await open(temp, 'wx', PRIVATE_FILE_MODE)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(dirname(temp), MKDIR_P)
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

/**
 * `error` as the rewind reports it for `item` when the system refused the write, the rename or
 * the removal (`CHECKPOINT_WRITE_REFUSED`, saying what to do): a folder that may not be written
 * (the nearest one there, as missing ones are made), a read-only file system, or a refusal of the
 * file itself (an immutable attribute, an ACL). Any other error as it is.
 */
export function refusal(item: PlanItem, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return error
  const refused = (why: string) => new ReinError('CHECKPOINT_WRITE_REFUSED', `${listedPath(item.path)} was left as it is: ${why}, then rewind again`, { details: { file: item.file, code }, cause: error })
  if (code === 'EROFS') return refused('the file system holding it is read-only (EROFS): mount it read-write')
  const folder = closedFolder(item.root, dirname(item.file))
  if (folder === undefined) return refused(`the system refused (${thrownMessage(error) ?? code}): check the permissions of that path (its owner, an immutable attribute, an ACL)`)
  const shown = folder === item.root ? '.' : relative(item.root, folder).split(sep).join('/')
  const name = folder === item.root ? 'the workspace root' : `its folder ${listedPath(shown)}`
  return refused(`${name} may not be written (${code}): give it write permission (chmod u+w ${shellWord(shown)})`)
}

/** The nearest folder from `folder` up to `root` that stands, when this process may not write it; `undefined` when it may. */
function closedFolder(root: string, folder: string): string | undefined {
  for (let at = folder; ; at = dirname(at)) {
    try {
      accessSync(at, constants.W_OK)
      return undefined
    } catch (error) {
      if (!isMissing(error)) return at
    }
    if (at === root || dirname(at) === at) return undefined
  }
}
