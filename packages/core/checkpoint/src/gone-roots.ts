/**
 * A workspace root that is gone when a rewind looks. A command of the rewound turns may have removed
 * it (`rm -rf` of the workspace): then every file it held was last recorded deleted, and the rewind
 * makes the root again to bring them back. Otherwise the project was moved or renamed since, with
 * everything in it: making its old path again would put the files a rewind restores apart from the
 * rest, so the files under it are skipped, saying so.
 */

import { lstatSync } from 'node:fs'
import { listedPath } from '@rein/base'
import type { CheckpointRecord } from './types.ts'

/**
 * The roots of `groups` (each a file's or folder's records, newest first) that are gone without the
 * records saying the turns removed them, each with the reason its items are skipped for.
 */
export function goneRoots(groups: readonly (readonly CheckpointRecord[])[]): ReadonlyMap<string, string> {
  const leftInPlace = new Map<string, boolean>()
  for (const [newest] of groups) {
    if (newest === undefined) continue
    leftInPlace.set(newest.root, (leftInPlace.get(newest.root) ?? false) || !isRemoval(newest))
  }
  const gone = new Map<string, string>()
  for (const [root, left] of leftInPlace) {
    if (left && isGone(root)) gone.set(root, goneReason(root))
  }
  return gone
}

/**
 * Whether a record says its path was gone after the change: a file deleted (content, or a snapshot's
 * `deleted; …` gap), a folder removed. Anything else — a write, a chmod, a made folder, a file too
 * big to keep — left something there, so a root gone since was not emptied by the turns.
 */
function isRemoval(record: CheckpointRecord): boolean {
  if (record.folder) return record.existed
  if (record.gap !== undefined) return record.gap.startsWith('deleted')
  return record.after === null && record.modeAfter === undefined
}

/** Whether nothing stands at `root`; one that cannot be looked at is left to the checks on each file, which say why. */
function isGone(root: string): boolean {
  try {
    return lstatSync(root, { throwIfNoEntry: false }) === undefined
  } catch {
    return false
  }
}

function goneReason(root: string): string {
  return `the workspace root ${listedPath(root)} is gone (moved or removed since the turn); rewind makes no folder there: make it again to restore into it`
}
