/**
 * A watch on one file for `rein chat`'s hot swap. cordis's own watcher needs a newer Node and
 * writes the file back, so this is a plain `fs.watch`.
 */

import { lstatSync, realpathSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'

/**
 * Calls `changed` when `file` is saved. It watches the file's folder and, when the file is a
 * symlink, the folder of the file it points to (where an edit of the target happens), looked up
 * again after each change in case the link now points elsewhere. Folders, not files: an editor
 * that saves by renaming a new file over it would leave a watch on the file itself looking at the
 * old one.
 */
export function watchFile(file: string, changed: () => void, failed: (error: Error) => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>()
  let names = new Map<string, Set<string>>()
  let target = file
  const update = () => {
    target = linkTarget(file) ?? target
    names = new Map()
    for (const path of new Set([file, target])) names.set(dirname(path), (names.get(dirname(path)) ?? new Set()).add(basename(path)))
    for (const [folder, watcher] of watchers) {
      if (names.has(folder)) continue
      watcher.close()
      watchers.delete(folder)
    }
    for (const folder of names.keys()) if (!watchers.has(folder)) watchers.set(folder, watchFolder(folder))
  }
  const watchFolder = (folder: string) => {
    const watcher = watch(folder, { persistent: false }, (_event, name) => {
      if (name !== null && !names.get(folder)?.has(name)) return
      update()
      changed()
    })
    watcher.on('error', (error) => {
      watcher.close()
      watchers.delete(folder)
      failed(error)
    })
    return watcher
  }
  update()
  return {
    close: () => {
      for (const watcher of watchers.values()) watcher.close()
      watchers.clear()
    },
  }
}

/**
 * The file a symlink points to, in the end; the file itself when it is none. Undefined while it
 * cannot be read — mid-save, a file may be gone for a moment — so the last one found is kept.
 */
function linkTarget(file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() ? realpathSync(file) : file
  } catch {
    return undefined
  }
}
