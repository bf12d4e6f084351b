/**
 * Files a turn replaced with a folder, or whose folder it replaced with a file: what stands in
 * their way is undone first, then they are restored, or found absent as they were before (the
 * rewind's second pass, service.ts). A plan foresees it, so a dry run says what the rewind will do
 * (for a file going back to absent, `foreseeFolders` does: it knows which folders go).
 */

import { lstat, readdir, rmdir } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { IS_NOW_NOT_A_FOLDER, parentProblem } from './parents.ts'
import { IS_NOW_A_DIRECTORY } from './plan.ts'
import type { PlanItem } from './types.ts'

/**
 * A file skipped because a folder stands where it was, or a file stands where its folder was; not
 * one whose mode alone goes back (nothing of it comes back once that is undone).
 */
export function blockedByKind(item: PlanItem): boolean {
  return !item.folder && !item.modeOnly && (item.reason === IS_NOW_A_DIRECTORY || item.reason?.endsWith(IS_NOW_NOT_A_FOLDER) === true)
}

/**
 * Removes the folders standing where blocked files go back to a content, when nothing but empty
 * folders is left in them; a folder with a file in it stays. One where a file goes back to absent
 * is not the rewind's to remove (unless it made it: `removeMadeFolders`).
 */
export async function removeEmptyFolders(items: readonly PlanItem[]): Promise<void> {
  for (const item of items) {
    if (item.before !== null && item.reason === IS_NOW_A_DIRECTORY && parentProblem(item.root, item.file) === undefined) await removeEmptyTree(item.file)
  }
}

/** Removes `folder` when it holds only folders that hold nothing else, deepest first; never follows a link, never removes a file. */
async function removeEmptyTree(folder: string): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
  for (const entry of entries) if (entry.isDirectory()) await removeEmptyTree(join(folder, entry.name))
  // Fails on a folder still holding anything (a file, a link, a folder that kept one): it stays.
  await rmdir(folder).catch(() => undefined)
}

/**
 * `items` with each blocked file the rewind will restore after all shown as `restore`: the folder in
 * its way holds nothing but folders and files the plan removes, or the file in its way is one the
 * plan removes. What else stands there (a person's file, a link) keeps it `skipped`.
 */
export async function foreseen(items: readonly PlanItem[]): Promise<PlanItem[]> {
  const removed = new Set(items.filter((item) => item.action === 'remove').map((item) => item.file))
  return Promise.all(items.map(async (item) => {
    if (item.before === null || !blockedByKind(item)) return item
    const clears = item.reason === IS_NOW_A_DIRECTORY ? await onlyRemoved(item.file, removed) : standingFile(item, removed)
    if (!clears) return item
    const { reason: _reason, ...rest } = item
    return { ...rest, action: 'restore' as const }
  }))
}

/** Whether `folder` holds nothing but folders and files in `removed`; a link or anything else answers no. */
async function onlyRemoved(folder: string, removed: ReadonlySet<string>): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => undefined)
  if (entries === undefined) return false
  for (const entry of entries) {
    const path = join(folder, entry.name)
    if (entry.isDirectory() ? !(await onlyRemoved(path, removed)) : !(entry.isFile() && removed.has(path))) return false
  }
  return true
}

/** Whether the file standing where `item`'s folder was is one the plan removes (the nearest such one, from the root down). */
async function standingFile(item: PlanItem, removed: ReadonlySet<string>): Promise<boolean> {
  const file = await firstNonFolder(item.root, dirname(item.file))
  return file !== undefined && removed.has(file)
}

/** The first path from the root down to `folder` (itself included) that is not a folder (a file, a link), if any. */
export async function firstNonFolder(root: string, folder: string): Promise<string | undefined> {
  let path = root
  for (const part of relative(root, folder).split(sep)) {
    path = join(path, part)
    const stats = await lstat(path).catch(() => undefined)
    if (stats === undefined) return undefined
    if (!stats.isDirectory()) return path
  }
  return undefined
}

/**
 * The files that stand as they did before the rewound turns once the rewind is done: restored to
 * a content, or found back already (their mode alone given back too). Their paths say what stood
 * around them then: a folder above each, no folder at any.
 */
export function filesBack(items: readonly PlanItem[]): Set<string> {
  const back = (item: PlanItem) => !item.folder && (item.before !== null || item.modeOnly === true) && (item.action === 'restore' || item.action === 'already')
  return new Set(items.filter(back).map((item) => item.file))
}

/**
 * Whether `item`, a file going back to absent and blocked (see `blockedByKind`), is absent as it
 * was before the turns: the folder at its path holds a file in `back` (so a folder stood there
 * then), or the file standing in place of one of its folders is in `back` (so no folder did). What
 * a first rewind leaves, found by a second.
 */
export async function absentAsBefore(item: PlanItem, back: ReadonlySet<string>): Promise<boolean> {
  if (item.before !== null || !blockedByKind(item)) return false
  if (item.reason === IS_NOW_A_DIRECTORY) return [...back].some((file) => file.startsWith(`${item.file}${sep}`))
  const standing = await firstNonFolder(item.root, dirname(item.file))
  return standing !== undefined && back.has(standing)
}
