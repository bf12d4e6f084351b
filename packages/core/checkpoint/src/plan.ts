/**
 * Planning a rewind: which records it undoes, and what each file's current content says about it.
 * Reads only; `restore.ts` acts on the plan.
 */

import { lstat, readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { contentHash } from './hash.ts'
import { parentProblem } from './parents.ts'
import type { CheckpointRecord, PlanItem } from './types.ts'

/**
 * The records rewinding to before `anchors` undoes, newest first: from the first record any of them
 * has, every record (a later edit sits on top of an earlier one). Given a turn and every later one,
 * a turn whose records landed late (a background command that ended during a later turn) does not
 * leave the later turns' earlier records behind. None when no anchor has records.
 */
export function recordsToUndo(records: readonly CheckpointRecord[], anchors: ReadonlySet<string>): CheckpointRecord[] {
  const first = records.find((record) => anchors.has(record.anchor))
  if (!first) return []
  return records.filter((record) => record.seq >= first.seq).sort((a, b) => b.seq - a.seq)
}

/** How a snapshot's record of a change of permissions alone (a `chmod`) begins its `gap`. */
const PERMISSIONS_CHANGED = 'its permissions changed from '

/** The `gap` of a change of permissions alone: the content stayed, and a rewind does not undo it. */
export function permissionsGap(before: number, after: number): string {
  const octal = (mode: number) => mode.toString(8).padStart(4, '0')
  return `${PERMISSIONS_CHANGED}${octal(before)} to ${octal(after)} (a rewind does not undo a change of permissions)`
}

function isPermissionsChange(record: CheckpointRecord): boolean {
  return record.gap?.startsWith(PERMISSIONS_CHANGED) === true
}

/** The modes a `permissionsGap` names; read back from its text, as no record field holds the second. */
const MODES = new RegExp(`^${PERMISSIONS_CHANGED}([0-7]{4}) to ([0-7]{4}) `)

/**
 * One note for the changes of permissions among `records` (newest first): from the oldest one's
 * mode before to the newest one's after, what a person restoring them by hand needs. A gap whose
 * modes cannot be read (not written by `permissionsGap`) is given as it is.
 */
function permissionsSpan(records: readonly CheckpointRecord[]): string | undefined {
  const gaps = records.filter(isPermissionsChange).map((record) => record.gap ?? '')
  const [newest, oldest] = [gaps[0]?.match(MODES), gaps.at(-1)?.match(MODES)]
  if (newest?.[2] === undefined || oldest?.[1] === undefined) return gaps.length > 0 ? gaps.join('; ') : undefined
  return permissionsGap(Number.parseInt(oldest[1], 8), Number.parseInt(newest[2], 8))
}

/**
 * The `gap` of a link, FIFO, socket or device made, pointed elsewhere or removed where no regular
 * file was before or after (a file replaced by one is recorded as that file's deletion instead).
 */
const NON_FILE = '(a symbolic link|a FIFO|a socket|a device)'
const NON_FILE_ONLY = new RegExp(`^(created; ${NON_FILE}|deleted; ${NON_FILE}|a symbolic link that changed)$`)

function isNonFileOnly(record: CheckpointRecord): boolean {
  return record.gap !== undefined && NON_FILE_ONLY.test(record.gap)
}

/**
 * Plans one file from its records (newest first). A change of permissions is not undone: alone
 * the file is `skipped`, saying so; beside changes of content (a later turn's, or the same
 * command's) it is left out of their chain (it changed no content), and the item's reason says the
 * permissions stay. Several are told as one, from the oldest mode to the newest. A link (or FIFO)
 * that stood at the path between changes of content is left out of their chain too: the file was
 * absent meanwhile, and what stands there now is judged as the file is. Only after a change of
 * content, though: one that stood there before the oldest record is what a rewind would have to
 * bring back, and cannot.
 */
export async function planFile(root: string, path: string, records: readonly CheckpointRecord[]): Promise<PlanItem> {
  // A change of permissions changed no content: the oldest record that says what the file held decides.
  const oldestIsContent = records.findLast((record) => !isPermissionsChange(record))?.gap === undefined
  const content = records.filter((record) => !isPermissionsChange(record) && !(oldestIsContent && isNonFileOnly(record)))
  if (content.length === records.length) return planContent(root, path, records)
  const permissions = permissionsSpan(records)
  if (content.length === 0) return { ...(await planContent(root, path, records)), reason: `not restored: ${permissions}` }
  const item = await planContent(root, path, content)
  const notes = [item.reason, permissions].filter((note) => note !== undefined)
  return { ...item, seqs: records.map((record) => record.seq), ...changedWhile(records), ...(notes.length > 0 ? { reason: notes.join('; ') } : {}) }
}

/** Plans one file from its records of content (newest first): what it should be now, what it goes back to. */
async function planContent(root: string, path: string, records: readonly CheckpointRecord[]): Promise<PlanItem> {
  const oldest = records[records.length - 1]
  const states = statesOf(records)
  const item = {
    root,
    path,
    file: resolve(root, path),
    before: oldest?.before ?? null,
    after: states?.at(-1) ?? records[0]?.after ?? null,
    seqs: records.map((record) => record.seq),
    ...changedWhile(records),
    ...(oldest?.mode === undefined ? {} : { mode: oldest.mode }),
  }
  const gap = records.find((record) => record.gap !== undefined)?.gap
  if (gap !== undefined) return { ...item, action: 'skipped', reason: `not restored: ${gap}` }
  if (!states) return { ...item, action: 'drifted', reason: 'changed between the recorded edits' }
  const unsafe = parentProblem(root, item.file)
  if (unsafe !== undefined) return { ...item, action: 'skipped', reason: unsafe }
  const current = await currentContent(item.file)
  if (current.kind === 'other') return { ...item, action: 'skipped', reason: current.reason }
  if (current.hash === item.before) return { ...item, action: 'already' }
  // The file may sit at any state the records passed through: after the newest, or before any of
  // them (a rewind to a later turn already undid the newer ones). Anything else is someone else's.
  if (!states.includes(current.hash)) {
    return { ...item, action: 'drifted', reason: current.hash === null ? 'deleted since the recorded edit' : 'changed since the recorded edit' }
  }
  return { ...item, action: item.before === null ? 'remove' : 'restore' }
}

/**
 * The contents the file went through, oldest first, or `undefined` when the records do not chain:
 * something else wrote the file between two of them, and going back past that would clobber it.
 * A record whose write never happened (the tool failed after recording) is passed over: the next
 * one starts where that one started.
 */
function statesOf(records: readonly CheckpointRecord[]): (string | null)[] | undefined {
  const oldestFirst = [...records].reverse()
  const states: (string | null)[] = [oldestFirst[0]?.before ?? null]
  for (const record of oldestFirst) {
    if (record.before === states.at(-1)) states.push(record.after)
    else if (states.length >= 2 && record.before === states.at(-2)) states.splice(-1, 1, record.after)
    else return undefined
  }
  return states
}

/** The newest command the file changed while it ran, when a snapshot found the change. */
function changedWhile(records: readonly CheckpointRecord[]): { changedWhile?: string } {
  const by = records.find((record) => record.by !== undefined)?.by
  return by === undefined ? {} : { changedWhile: by }
}

/** The reason a file is skipped when a folder stands at its path. */
export const IS_NOW_A_DIRECTORY = 'is now a directory'

type Current = { kind: 'file'; hash: string | null } | { kind: 'other'; reason: string }

/** The file's content hash (`null`: absent), or why it is not a plain file rewind may touch. */
async function currentContent(file: string): Promise<Current> {
  let stats
  try {
    stats = await lstat(file)
  } catch (error) {
    if (isMissing(error)) return { kind: 'file', hash: null }
    throw error
  }
  if (stats.isSymbolicLink()) return { kind: 'other', reason: 'is now a symbolic link' }
  if (!stats.isFile()) return { kind: 'other', reason: stats.isDirectory() ? IS_NOW_A_DIRECTORY : 'is not a regular file' }
  return { kind: 'file', hash: contentHash(await readFile(file)) }
}

/** Whether an fs error says the path (or a parent) does not exist. */
export function isMissing(error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined
  return code === 'ENOENT' || code === 'ENOTDIR'
}
