/** A walk's changes as checkpoint changes, contents from the pack store. */

import { lstatSync } from 'node:fs'
import { join } from 'node:path'
import { parentProblem } from '../parents.ts'
import { permissionsGap } from '../plan.ts'
import type { PackStore } from './pack-store.ts'
import type { FileState, WalkChanges } from './walk.ts'

/** One file's change between two walks; `gap` when its contents could not be kept. */
export interface SnapshotChange {
  readonly path: string
  readonly existed: boolean
  readonly before: Uint8Array | null
  readonly after: Uint8Array | null
  readonly gap?: string
  /** The file's (or removed folder's) permission bits before the command, when it existed. */
  readonly mode?: number
  /** A change of permissions: the file's bits after the command (see `FileChange.modeAfter`). */
  readonly modeAfter?: number
  /** For a created file: how many of its folders, up from its own, the command made too; for a made folder, how many above it. */
  readonly createdFolders?: number
  /** A folder the command made with nothing in it, or (`existed`) an empty one it removed (see `FileChange.folder`). */
  readonly folder?: true
}

/**
 * A file that appears where the last walk skipped an ignored path, with a change time this much
 * before that walk started, was there already, merely hidden (an edited `.gitignore` stopped
 * ignoring it): it was not created. Anywhere else a new file is new, even with an old change time
 * (a folder renamed keeps its files' times). The margin covers file systems with coarse times.
 */
const CREATED_MARGIN_MS = 2000

/** The changes a walk of `root` found, in path order. */
export function snapshotChanges(root: string, walk: WalkChanges, store: PackStore): SnapshotChange[] {
  const changes: SnapshotChange[] = []
  const since = walk.since ?? 0
  for (const [path, now, mayBeRevealed, madeFolders] of walk.created) {
    if (mayBeRevealed && now.ctimeMs < since - CREATED_MARGIN_MS) continue
    changes.push(created(path, now, madeFolders, store))
  }
  for (const [path, was, now] of walk.changed) {
    // Written with the same bytes (touched, or rewritten by a formatter that changed nothing).
    const content = was.hash === undefined || was.hash !== now.hash ? changed(path, was, now, store) : undefined
    if (content) changes.push(content)
    // A chmod: a record of its own, after the content's, with both modes (a rewind gives the first
    // back while the file has the second). Its gap is for builds from before `modeAfter`: they
    // report it as not undone, and take a record without one for a content change.
    if (was.mode !== now.mode && !was.link && !now.link && !was.special && !now.special) {
      changes.push({ path, existed: true, before: null, after: null, gap: permissionsGap(was.mode, now.mode), mode: was.mode, modeAfter: now.mode })
    }
  }
  for (const [path, above] of walk.made) changes.push({ path, folder: true, existed: false, before: null, after: null, ...(above > 0 ? { createdFolders: above } : {}) })
  for (const [path, mode] of walk.removed) {
    // Still a folder there, no longer walked (newly ignored): not removed.
    if (!folderExists(root, path)) changes.push({ path, folder: true, existed: true, before: null, after: null, mode })
  }
  for (const [path, was] of walk.deleted) {
    // Still there but no longer walked (newly ignored): not deleted. A folder in its place is a deletion.
    if (!fileExists(root, path)) changes.push(deleted(path, was, store))
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

function created(path: string, now: FileState, madeFolders: number, store: PackStore): SnapshotChange {
  const after = content(now, store)
  if (typeof after === 'string') return { path, existed: false, before: null, after: null, gap: `created; ${after}` }
  return madeFolders > 0 ? { path, existed: false, before: null, after, createdFolders: madeFolders } : { path, existed: false, before: null, after }
}

function changed(path: string, was: FileState, now: FileState, store: PackStore): SnapshotChange {
  if (was.link) return { path, existed: true, before: null, after: null, gap: now.link ? 'a symbolic link that changed' : 'was a symbolic link before the command (links are not restored)' }
  if (was.special) return { path, existed: true, before: null, after: null, gap: `was ${was.gap ?? 'not a regular file'} before the command (not restored)` }
  // A link, FIFO, socket or device where a file was: the file's deletion, its content kept (a
  // rewind skips the path while that stands there, and brings the file back once it is gone).
  if (now.link || now.special) return deleted(path, was, store)
  const before = content(was, store, 'before the command')
  const after = content(now, store)
  if (typeof before === 'string') return { path, existed: true, before: null, after: null, gap: before }
  if (typeof after === 'string') return { path, existed: true, before: null, after: null, gap: after }
  return { path, existed: true, before, after, mode: was.mode }
}

function deleted(path: string, was: FileState, store: PackStore): SnapshotChange {
  const before = content(was, store, 'before the command')
  if (typeof before === 'string') return { path, existed: true, before: null, after: null, gap: `deleted; ${before}` }
  return { path, existed: true, before, after: null, mode: was.mode }
}

/** The file's content at that walk, or why it is not available. */
function content(state: FileState, store: PackStore, when = 'now'): Uint8Array | string {
  if (state.hash === undefined) return state.gap ?? 'its content was not kept'
  const content = store.get(state.hash)
  if (content === 'gone') return `its content ${when} is no longer in the snapshot store (its pack was removed: the store's size cap, or by hand)`
  if (content === 'damaged') return `its content ${when} is damaged in the snapshot store (its bytes no longer match their hash)`
  if (content === 'unreadable') return `its content ${when} could not be read from the snapshot store (its pack could not be opened)`
  return content
}

/** Whether a folder is still at `path`, in the workspace: not a link, not through a folder that became one. */
function folderExists(root: string, path: string): boolean {
  const folder = join(root, path)
  return parentProblem(root, folder) === undefined && lstatSync(folder, { throwIfNoEntry: false })?.isDirectory() === true
}

/** Whether a file (or link) is still at `path`, in the workspace: not a folder, not through a folder that became a link. */
function fileExists(root: string, path: string): boolean {
  const file = join(root, path)
  if (parentProblem(root, file) !== undefined) return false
  const stats = lstatSync(file, { throwIfNoEntry: false })
  return stats !== undefined && !stats.isDirectory()
}
