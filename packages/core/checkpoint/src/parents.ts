/**
 * Whether the folders between a workspace root and a file are still real folders. Rewind (and a
 * snapshot asking whether a file still exists) must not act through a folder that became a
 * symbolic link since: that would write or delete outside the workspace.
 */

import { lstatSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'

/** How a reason ends when a file stands where one of the file's folders was. */
export const IS_NOW_NOT_A_FOLDER = 'is now not a folder'

/**
 * Why rewind may not touch `file` under `root` — a parent folder is now a link or not a folder, or
 * the file is outside the root — or `undefined` when it may. Missing folders are fine: rewind makes them.
 */
export function parentProblem(root: string, file: string): string | undefined {
  const inside = relative(root, dirname(file))
  if (inside === '') return undefined
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return `is outside the workspace root ${root}`
  let folder = root
  for (const part of inside.split(sep)) {
    folder = join(folder, part)
    const stats = lstatSync(folder, { throwIfNoEntry: false })
    if (!stats) return undefined
    if (stats.isSymbolicLink()) return `its folder ${relative(root, folder)} is now a symbolic link`
    if (!stats.isDirectory()) return `its folder ${relative(root, folder)} ${IS_NOW_NOT_A_FOLDER}`
  }
  return undefined
}
