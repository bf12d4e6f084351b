/**
 * Where rewind puts a file it would otherwise delete when it cannot be sure the turn made it: a
 * snapshot sees a file appear, but it may have been moved in from elsewhere, or written over a
 * link, and deleting it could lose the only copy. Such files go to a private folder instead.
 */

import { constants, lstatSync } from 'node:fs'
import { chmod, copyFile, mkdir, rename, rmdir, unlink } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, ensurePrivateDir, withSuffix } from '@rein/base'
import type { PlanItem } from './types.ts'

/** `<home>/recovered/<session>/<time>`: one folder per rewind. */
export function setAsideFolder(home: string, sessionId: string, now = new Date()): string {
  return join(home, 'recovered', sessionId.replace(/[^A-Za-z0-9._-]/g, '_'), now.toISOString().replace(/[:.]/g, '-'))
}

/**
 * Moves `file` (at `path` under its root) into `folder`, keeping its relative path; returns where it
 * went. What rein keeps there is 0600 (it may be a secret the workspace had open to all). A file
 * another name reaches too (a hard link: `ln ~/notes.txt .`) is copied instead, and this name
 * removed, so the other keeps its mode; another user's file (rein not run as root may not chmod
 * it) keeps its owner's mode, inside rein's 0700 folder.
 */
export async function setAside(file: string, path: string, folder: string): Promise<string> {
  const { target, made } = await freeTarget(path, folder)
  try {
    return await moveAside(file, target)
  } catch (error) {
    await removeMade(dirname(target), made)
    throw error
  }
}

/** Moves `file` to `target` (a free name in a private folder), as `setAside` says. */
async function moveAside(file: string, target: string): Promise<string> {
  const shared = lstatSync(file).nlink > 1
  // One this process may not read cannot be copied: it is moved as it is, below, and keeps its mode.
  if (shared && await privateCopy(file, target).then(() => true, () => false)) return await unlinkCopied(file, target)
  try {
    await rename(file, target)
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EXDEV')) throw error
    // Another file system: copy, then remove the original only once the copy is whole.
    await privateCopy(file, target)
    return await unlinkCopied(file, target)
  }
  if (!shared) await chmod(target, PRIVATE_FILE_MODE).catch(notPermitted)
  return target
}

/**
 * Removes `file`'s name once `target` holds a copy of it; returns `target`. When the name stays
 * (its folder read-only), the copy goes too: the item fails with the file where it was, and a copy
 * (of a secret, maybe) nobody is told of must not stay under `recovered/`, nor keep its folders.
 */
async function unlinkCopied(file: string, target: string): Promise<string> {
  try {
    await unlink(file)
  } catch (error) {
    await unlink(target).catch(() => undefined)
    throw error
  }
  return target
}

/** Rethrows all but EPERM: another user's file, which only its owner (or root) may chmod. */
function notPermitted(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error
}

/** A copy `keepCopy` kept: where it is, and the first folder made for it (see `freeTarget`), if any. */
export interface KeptCopy {
  path: string
  made: string | undefined
}

/** Copies `file` (at `path` under its root) into `folder`, keeping its relative path; returns the copy, or `undefined` when there is no file to copy. */
export async function keepCopy(file: string, path: string, folder: string): Promise<KeptCopy | undefined> {
  if (!regularFileAt(file)) return undefined
  const { target, made } = await freeTarget(path, folder)
  try {
    await privateCopy(file, target)
  } catch (error) {
    await removeMade(dirname(target), made)
    throw error
  }
  return { path: target, made }
}

/**
 * Removes a copy `keepCopy` kept that turned out not to be needed (the restore it was for failed:
 * the file still holds it), and the folders made for it that hold nothing else then (`rmdir`: one
 * holding anything stays; one that was there before, `<home>/recovered` say, is not this copy's to
 * take). Best effort.
 */
export async function discardCopy(copy: KeptCopy): Promise<void> {
  await unlink(copy.path).catch(() => undefined)
  await removeMade(dirname(copy.path), copy.made)
}

/** `<home>/recovered`, from a rewind's `<home>/recovered/<session>/<time>`. */
function recoveredOf(folder: string): string {
  return dirname(dirname(folder))
}

/**
 * Copies `file` to `target`, which it must not overwrite (COPYFILE_EXCL: a name taken meanwhile
 * fails the copy), and makes the copy 0600. copyFile gives it `file`'s mode first, seen by nobody:
 * its folder is private (0700).
 */
async function privateCopy(file: string, target: string): Promise<void> {
  await copyFile(file, target, constants.COPYFILE_EXCL)
  await chmod(target, PRIVATE_FILE_MODE)
}

/** Whether a regular file stands at `file` (not a link): only such a file is copied before a restore. */
function regularFileAt(file: string): boolean {
  return lstatSync(file, { throwIfNoEntry: false })?.isFile() === true
}

/**
 * A free name for `path` in `folder`, its folders made private; `made` is the first folder this
 * call made (`mkdir -p` made it and those below it), if any, for `removeMade` to take back.
 */
async function freeTarget(path: string, folder: string): Promise<{ target: string; made: string | undefined }> {
  const target = freeName(placeIn(path, folder))
  const made = await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE })
  // Folders that were there already: narrowed to 0700 as ever (an older rein may have left them open).
  if (made === undefined) await ensurePrivateDir(dirname(target))
  return { target, made }
}

/**
 * After a move or copy into `folder` failed: removes the folders `freeTarget` made for it, deepest
 * first, up to `made`, so no empty tree is left under `recovered/` for a person to wonder at. Each
 * only when empty (`rmdir`): another file kept there meanwhile keeps its folders. Best effort.
 */
async function removeMade(folder: string, made: string | undefined): Promise<void> {
  if (made === undefined) return
  for (let at = folder; ; at = dirname(at)) {
    if (!await rmdir(at).then(() => true, () => false)) return
    if (at === made || dirname(at) === at) return
  }
}

/** Where `path` goes in `folder`: resolved against `/` first, so no `..` in a recorded path can lead out of `folder`. */
function placeIn(path: string, folder: string): string {
  return join(folder, relative('/', resolve('/', path)))
}

/**
 * Why the rewind cannot keep `item`'s file in `folder` (moved aside, or copied before a restore):
 * its place there is a path too long for the system (a path near PATH_MAX in the workspace). Asked
 * of the system, not counted, so the limit is the system's own; the plan and the rewind ask alike.
 */
function asideProblem(item: PlanItem, folder: string): string | undefined {
  if (item.changedWhile === undefined || !(item.action === 'remove' || (item.action === 'restore' && item.before !== null && copied(item.file)))) return undefined
  try {
    lstatSync(placeIn(item.path, folder), { throwIfNoEntry: false })
    return undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') return undefined
  }
  const recovered = recoveredOf(folder)
  return item.action === 'remove'
    ? `cannot be moved aside: its path under ${recovered} would be too long for the system (ENAMETOOLONG); it stays as it is`
    : `cannot be restored: a copy of what it holds would not fit under ${recovered} (its path there too long for the system, ENAMETOOLONG); it stays as it is`
}

/** Whether a restore copies `file` first (as `keepCopy` does: a deleted file leaves nothing to copy); a path it cannot look at is the restore's to fail. */
function copied(file: string): boolean {
  try {
    return regularFileAt(file)
  } catch {
    return false
  }
}

/** `item`, or, when the rewind could not keep its file aside (see `asideProblem`), the item `skipped`, saying why. */
export function asideChecked(item: PlanItem, folder: string): PlanItem {
  const problem = asideProblem(item, folder)
  return problem === undefined ? item : { ...item, action: 'skipped', reason: problem }
}

/** `target`, or `target.1`, `target.2`, … (a long name cut to fit): two files of one path (from two roots) both kept. */
function freeName(target: string): string {
  let name = target
  for (let index = 1; lstatSync(name, { throwIfNoEntry: false }) !== undefined; index++) name = join(dirname(target), withSuffix(basename(target), `.${index}`))
  return name
}
