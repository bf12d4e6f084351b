/**
 * A watch on one file for `rein chat`'s hot swap. cordis's own watcher needs a newer Node and
 * writes the file back, so this is a plain `fs.watch`.
 */

import { lstatSync, readlinkSync, realpathSync, statSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'

/** A folder being watched, and which folder it was: one removed and made again is another. */
interface FolderWatch {
  watcher: FSWatcher
  identity: string | undefined
}

/** How many times one event may move the watches on: each pass goes one missing folder deeper. */
const MAX_PASSES = 16

/**
 * Calls `changed` when `file` is saved. It watches the file's folder and, when the file is a
 * symlink, the folder of the file it points to (where an edit of the target happens), looked up
 * again after each change in case the link now points elsewhere. Folders, not files: an editor
 * that saves by renaming a new file over it would leave a watch on the file itself looking at the
 * old one.
 *
 * A folder may go away while it is watched (a dotfiles folder removed and checked out again), or
 * not be there yet (a link made before its target): each watched folder's parent is watched too,
 * and a missing one is waited for in the nearest folder that exists, so the watch moves back to the
 * file as soon as its folder is there again.
 */
export function watchFile(file: string, changed: () => void, failed: (error: Error) => void): { close(): void } {
  const watchers = new Map<string, FolderWatch>()
  let names = new Map<string, Set<string>>()
  /** Folders watched for the file itself; a parent watched only to see one come back may fail quietly. */
  let needed = new Set<string>()
  let target = file
  let closed = false
  /** The watches each path needs now; true when they changed. */
  const place = (): boolean => {
    target = linkTarget(file) ?? target
    names = new Map()
    needed = new Set()
    for (const path of new Set([file, target])) {
      for (const { folder, name, parent } of watchPoints(path)) {
        names.set(folder, (names.get(folder) ?? new Set()).add(name))
        if (!parent) needed.add(folder)
      }
    }
    let moved = false
    for (const [folder, watched] of watchers) {
      if (names.has(folder) && watched.identity === identityOf(folder)) continue
      watched.watcher.close()
      watchers.delete(folder)
      moved = true
    }
    for (const folder of names.keys()) {
      if (watchers.has(folder)) continue
      // Looked at before the watch starts: a folder made in between shows on the next pass.
      const identity = identityOf(folder)
      const watcher = watchFolder(folder)
      if (!watcher) continue
      watchers.set(folder, { watcher, identity })
      moved = true
    }
    return moved
  }
  // A folder made (or removed) while the watches moved sent its event to no one: look again until
  // nothing moves, each pass one folder deeper.
  const update = () => {
    for (let pass = 0; pass < MAX_PASSES && place(); pass += 1);
  }
  // Once per folder: each later event tries that folder again, and would say it again.
  const reported = new Set<string>()
  const fail = (folder: string, error: Error) => {
    if (reported.has(folder)) return
    reported.add(folder)
    failed(error)
  }
  const watchFolder = (folder: string): FSWatcher | undefined => {
    let watcher: FSWatcher
    try {
      watcher = watch(folder, { persistent: false }, (_event, name) => {
        if (closed || (name !== null && !names.get(folder)?.has(name))) return
        update()
        changed()
      })
    } catch (error) {
      // Gone since it was looked up (its parent's watch sees it come back), or a parent this user
      // may not read (`/home` can be 711): the file is still watched where it is.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && needed.has(folder)) fail(folder, error as Error)
      return undefined
    }
    watcher.on('error', (error) => {
      watcher.close()
      watchers.delete(folder)
      if (needed.has(folder)) fail(folder, error)
    })
    return watcher
  }
  update()
  return {
    close: () => {
      closed = true
      for (const { watcher } of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}

/**
 * Where `path` can be seen to change, appear or go: the nearest folder of it that exists, for the
 * next name down, and that folder's parent (`parent: true`), for the folder itself (removed, or
 * made again).
 */
function watchPoints(path: string): { folder: string; name: string; parent: boolean }[] {
  let name = basename(path)
  let folder = dirname(path)
  while (identityOf(folder) === undefined && dirname(folder) !== folder) {
    name = basename(folder)
    folder = dirname(folder)
  }
  const above = dirname(folder)
  const points = [{ folder, name, parent: false }]
  return above === folder ? points : [...points, { folder: above, name: basename(folder), parent: true }]
}

/**
 * Which folder is at `folder` now, or undefined when none is: device, inode and birth time, since
 * a folder removed and made again at once often gets the inode back (ext4).
 */
function identityOf(folder: string): string | undefined {
  try {
    const stat = statSync(folder, { bigint: true })
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}:${stat.birthtimeNs}` : undefined
  } catch {
    return undefined
  }
}

/**
 * The file a symlink points to, in the end; the file itself when it is none. A link whose target
 * is missing gives the path the target will have, so it can be waited for there. Undefined while
 * the link itself cannot be read — mid-save, a file may be gone for a moment — so the last one
 * found is kept.
 */
function linkTarget(file: string): string | undefined {
  try {
    if (!lstatSync(file).isSymbolicLink()) return file
  } catch {
    return undefined
  }
  try {
    return realpathSync(file)
  } catch {
    return danglingTarget(file)
  }
}

/** Where a link that leads to nothing points, following each link on the way; undefined for a loop. */
function danglingTarget(link: string): string | undefined {
  let path = link
  for (let hops = 0; hops < 40; hops += 1) {
    let next: string
    try {
      next = readlinkSync(path)
    } catch {
      // Not a link (or not there): the end of the chain.
      return path
    }
    path = resolve(dirname(path), next)
  }
  return undefined
}
