/**
 * Whether a workspace root and the folders between it and a file are still real folders. Rewind (and
 * a snapshot asking whether a file still exists) must not act through a folder that became a
 * symbolic link since: that would write or delete outside the workspace.
 */

import { lstatSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'
import { listedPath } from '@rein/base'

/** How a reason ends when a file stands where one of the file's folders was. */
export const IS_NOW_NOT_A_FOLDER = 'is now not a folder'

/**
 * Why rewind may not touch `file` under `root` — the root or a parent folder is now a link or not a
 * folder, or the file is outside the root — or `undefined` when it may. Missing folders are fine: rewind makes them.
 */
export function parentProblem(root: string, file: string): string | undefined {
  const rootProblem = problemWithRoot(root)
  if (rootProblem !== undefined) return rootProblem
  const inside = relative(root, dirname(file))
  if (inside === '') return undefined
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return `is outside the workspace root ${listedPath(root)}`
  let folder = root
  for (const part of inside.split(sep)) {
    folder = join(folder, part)
    const stats = lstatSync(folder, { throwIfNoEntry: false })
    if (!stats) return undefined
    // Quoted when the name could break the reason's line or reorder it (a command can make such a name).
    if (stats.isSymbolicLink()) return `its folder ${listedPath(relative(root, folder))} is now a symbolic link`
    if (!stats.isDirectory()) return `its folder ${listedPath(relative(root, folder))} ${IS_NOW_NOT_A_FOLDER}`
  }
  return undefined
}

/**
 * Roots found sound, by device and inode. A root whose name still reaches the same folder needs no
 * new real-path walk: a folder above it that became a link to elsewhere would reach another folder
 * (another inode), and the same folder is the workspace wherever it now lies. Saves a `realpath` on
 * every call, which rewind and the snapshot diff make once or more per file.
 */
const soundRoots = new Map<string, string>()

/**
 * Why nothing under `root` may be touched: it is now a link or not a folder, or its real path is no
 * longer itself. Records keep the root's real path, so a different one means a folder above it became
 * a link. A missing root is judged by the nearest folder above it that exists (rewind makes the rest).
 */
function problemWithRoot(root: string): string | undefined {
  const stats = lstatSync(root, { throwIfNoEntry: false })
  if (stats?.isSymbolicLink()) return `the workspace root ${listedPath(root)} is now a symbolic link`
  // Not the words of a file standing where a folder was: rewind clears that case, never the root.
  if (stats && !stats.isDirectory()) return `the workspace root ${listedPath(root)} is no longer a folder`
  const key = stats && `${stats.dev}:${stats.ino}`
  if (key !== undefined && soundRoots.get(root) === key) return undefined
  let existing = root
  if (!stats) while (!lstatSync(existing, { throwIfNoEntry: false }) && dirname(existing) !== existing) existing = dirname(existing)
  let real: string
  try {
    real = realpathSync.native(existing)
  } catch {
    return `the workspace root ${listedPath(root)} now leads nowhere (a folder above it is a broken link)`
  }
  if (real !== existing) return `the workspace root ${listedPath(root)} now leads to ${listedPath(join(real, relative(existing, root)))}`
  if (key !== undefined) soundRoots.set(root, key)
  return undefined
}
