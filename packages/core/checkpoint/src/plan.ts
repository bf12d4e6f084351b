/**
 * Planning a rewind: which records it undoes, and what each file's current content says about it.
 * Reads only; `restore.ts` acts on the plan.
 */

import { lstat, readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { contentHash } from './hash.ts'
import { parentProblem } from './parents.ts'
import type { ModeBack } from './restore.ts'
import type { CheckpointRecord, PlanItem, PlanPermissions } from './types.ts'

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

/**
 * The `gap` of a change of permissions alone. Builds from before `modeAfter` read it, and report
 * the change as not undone, in these words; this build reads the record's `mode` and `modeAfter`.
 */
export function permissionsGap(before: number, after: number): string {
  return `${PERMISSIONS_CHANGED}${octal(before)} to ${octal(after)} (a rewind does not undo a change of permissions)`
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0')
}

function isPermissionsChange(record: CheckpointRecord): boolean {
  return record.gap?.startsWith(PERMISSIONS_CHANGED) === true
}

/** The modes a `permissionsGap` names: all an older build's record says of them. */
const MODES = new RegExp(`^${PERMISSIONS_CHANGED}([0-7]{4}) to ([0-7]{4}) `)

/** What the changes of permissions of one file say, from the mode before the oldest to the one the newest left. */
interface ModeSpan {
  /** The mode before the oldest change: what the file gets back. */
  readonly to: number
  /** The mode the newest change left. */
  readonly from: number
  /**
   * The mode each change left, oldest first: what the file may have, by these commands (a rewind of
   * later turns gave back their modes already).
   */
  readonly left: readonly number[]
  /** Every change has `mode` and `modeAfter`, and each starts where the one before it ended: nobody's chmod came between. */
  readonly chained: boolean
  /** Every change has `mode` and `modeAfter`: a rewind may undo them. Else an older build recorded one, and the modes are its gaps'. */
  readonly recorded: boolean
}

/** The span of `changes` (newest first), or `undefined` when an older build's gap does not name the modes. */
function modeSpan(changes: readonly CheckpointRecord[]): ModeSpan | undefined {
  const oldestFirst = [...changes].reverse()
  const modes = oldestFirst.map((record) => (record.mode === undefined || record.modeAfter === undefined ? undefined : [record.mode, record.modeAfter] as const))
  const [first, last] = [modes[0], modes.at(-1)]
  if (modes.every((pair) => pair !== undefined) && first !== undefined && last !== undefined) {
    const chained = modes.every((pair, index) => index === 0 || pair[0] === modes[index - 1]?.[1])
    return { to: first[0], from: last[1], left: modes.map((pair) => pair[1]), chained, recorded: true }
  }
  const [newest, oldest] = [changes[0]?.gap?.match(MODES), changes.at(-1)?.gap?.match(MODES)]
  if (newest?.[2] === undefined || oldest?.[1] === undefined) return undefined
  const from = Number.parseInt(newest[2], 8)
  return { to: Number.parseInt(oldest[1], 8), from, left: [from], chained: false, recorded: false }
}

/**
 * What the rewind does with the permissions, given the file's mode now (`undefined`: absent, and
 * the rewind creates it with `to`). The file may have any mode the changes left (the newest's, or
 * an earlier one's once a rewind of the later turns gave theirs back), as its content may sit at
 * any state its records passed through; `from` is then that mode. Any other mode, but the one
 * before them, is a person's later chmod: left, as a changed file's content is. `gaps`: what to
 * say when an older build's gaps do not name the modes.
 */
function permissionsFor(span: ModeSpan | undefined, gaps: string, now: number | undefined): PlanPermissions {
  if (span === undefined) return { action: 'keep', reason: gaps }
  const { from, to } = span
  // Changed and changed back: nothing to undo, nothing to say.
  if (!span.recorded) return from === to ? { from, to, action: 'already' } : { from, to, action: 'keep', reason: `${PERMISSIONS_CHANGED}${octal(to)} to ${octal(from)} and stay so (an older rein recorded the change without the mode after it)` }
  if (now === to) return { from, to, action: 'already' }
  const left = (mode: number, why: string) => ({ from, to, action: 'keep' as const, reason: `its permissions (${octal(mode)} now) left as they are: ${why}; ${octal(to)} before` })
  if (now !== undefined && !span.chained) return left(now, 'changed between the rewound commands\' changes')
  if (now !== undefined && !span.left.includes(now)) return left(now, `changed since the rewound commands set ${octal(from)}`)
  const has = now ?? from
  return { from: has, to, action: 'restore', reason: `its permissions back to ${octal(to)} (from ${octal(has)})` }
}

/**
 * The permissions of a file the rewind leaves as it is (drifted, skipped): they stay too, and the
 * item says what they were; nothing when no regular file stands there to have any (a folder in
 * its place: the reason stays the one the rewind's second pass looks for).
 */
function permissionsLeft(permissions: PlanPermissions, now: number | undefined): PlanPermissions | undefined {
  if (now === undefined) return undefined
  if (permissions.action !== 'restore' || permissions.to === undefined) return permissions
  return { ...permissions, action: 'keep', reason: `its permissions (${octal(now)} now) left with it; ${octal(permissions.to)} before` }
}

/** What a rewind gives back of the mode, for `writeAtomically` and `giveModeBack`; none when the plan gives none. */
export function modeBackOf(item: PlanItem): ModeBack | undefined {
  const { permissions } = item
  if (permissions?.action !== 'restore' || permissions.from === undefined || permissions.to === undefined) return undefined
  return { from: permissions.from, to: permissions.to }
}

/**
 * `item` as the rewind left it, given the mode the file has once done: a mode other than the one
 * it was to get back is a person's chmod since the plan, left as it is, and the item says so.
 */
export function withModeDone(item: PlanItem, mode: number): PlanItem {
  const { permissions } = item
  if (permissions?.action !== 'restore' || permissions.to === undefined || mode === permissions.to) return item
  return withPermissions(item, { ...permissions, action: 'keep', reason: `its permissions (${octal(mode)} now) left as they are: changed since the plan; ${octal(permissions.to)} before` })
}

/** `item` with `permissions`, their note after its reason. */
function withPermissions(item: PlanItem, permissions: PlanPermissions): PlanItem {
  const { permissions: earlier, reason: said, ...rest } = item
  // The earlier note is the last one (a rewind settles them again at the write).
  const own = earlier?.reason !== undefined && said?.endsWith(earlier.reason) ? said.slice(0, -earlier.reason.length).replace(/; $/, '') : said
  const reason = [own, permissions.reason].filter((note) => note !== undefined && note !== '').join('; ')
  return { ...rest, permissions, ...(reason === '' ? {} : { reason }) }
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
 * Plans one file from its records (newest first). A change of permissions (`chmod`) is left out
 * of the chain of content (it changed no content), and planned beside it: the file gets back the
 * mode before the oldest change while it has the one the newest left (see `permissionsFor`);
 * alone, the item gives back the mode only (`modeOnly`). A file that goes back to absent takes its
 * permissions with it. A link (or FIFO) that stood at the path between changes of content is left
 * out of their chain too: the file was absent meanwhile, and what stands there now is judged as
 * the file is. Only after a change of content, though: one that stood there before the oldest
 * record is what a rewind would have to bring back, and cannot.
 */
export async function planFile(root: string, path: string, records: readonly CheckpointRecord[]): Promise<PlanItem> {
  // A change of permissions changed no content: the oldest record that says what the file held decides.
  const oldestIsContent = records.findLast((record) => !isPermissionsChange(record))?.gap === undefined
  const content = records.filter((record) => !isPermissionsChange(record) && !(oldestIsContent && isNonFileOnly(record)))
  if (content.length === records.length) return planContent(root, path, records)
  const changes = records.filter(isPermissionsChange)
  const span = changes.length === 0 ? undefined : modeSpan(changes)
  const gaps = changes.map((record) => record.gap ?? '').join('; ')
  if (content.length === 0) return planModeOnly(root, path, records, span, gaps)
  const planned = await planContent(root, path, content)
  // Created again, the file gets the mode it had before the oldest record: a chmod's own mode
  // before, when one is the oldest; else the content's (else, with none, the one the chmods began from).
  const oldest = records.at(-1)
  const mode = (oldest?.modeAfter !== undefined ? oldest.mode : planned.mode) ?? (span?.recorded ? span.to : undefined)
  const item = { ...planned, seqs: records.map((record) => record.seq), ...changedWhile(records), ...(mode === undefined ? {} : { mode }) }
  if (changes.length === 0 || item.before === null) return item
  const now = await modeNow(item.file)
  // Absent now, the file is created with `mode`: that is what its permissions go back to.
  const permissions = permissionsFor(now === undefined && span?.recorded && mode !== undefined ? { ...span, to: mode } : span, gaps, now)
  if (item.action === 'drifted' || item.action === 'skipped') {
    const left = permissionsLeft(permissions, now)
    return left === undefined ? item : withPermissions(item, left)
  }
  // Its content back already: only the mode is left to give back.
  if (item.action === 'already' && permissions.action === 'restore') return withPermissions({ ...item, action: 'restore', modeOnly: true, before: null, after: null }, permissions)
  return withPermissions(item, permissions)
}

/**
 * Plans a file whose records changed its permissions alone: `restore` gives the mode back, `already`
 * when it has it; a person's later chmod, or the file deleted since, leaves it `drifted`; what
 * an older build recorded is `skipped`, as that build planned it.
 */
async function planModeOnly(root: string, path: string, records: readonly CheckpointRecord[], span: ModeSpan | undefined, gaps: string): Promise<PlanItem> {
  const item = { root, path, file: resolve(root, path), before: null, after: null, seqs: records.map((record) => record.seq), ...changedWhile(records), modeOnly: true as const }
  if (span?.recorded !== true) {
    const permissions = permissionsFor(span, gaps, undefined)
    return withPermissions({ ...item, action: permissions.action === 'already' ? 'already' : 'skipped' }, permissions)
  }
  const unsafe = parentProblem(root, item.file)
  if (unsafe !== undefined) return { ...item, action: 'skipped', reason: unsafe }
  const current = await currentKind(item.file)
  if (current.kind === 'absent') return { ...item, action: 'drifted', reason: 'deleted since its permissions changed' }
  if (current.kind === 'other') return { ...item, action: 'skipped', reason: current.reason }
  const permissions = withoutSetIdGiven(permissionsFor(span, gaps, current.mode))
  return withPermissions({ ...item, action: permissions.action === 'keep' ? 'drifted' : permissions.action }, permissions)
}

/** The setuid and setgid bits: who runs the file runs as its owner, or group. */
const SET_ID = 0o6000

/**
 * `permissions`, but left as they are when giving them back would add a setuid or setgid bit to a
 * file whose content no record says: a person's other build in its place (same mode) would run as
 * its owner. With the content restored, or checked as back already, the bits come back with it.
 */
function withoutSetIdGiven(permissions: PlanPermissions): PlanPermissions {
  const { from, to } = permissions
  if (permissions.action !== 'restore' || from === undefined || to === undefined || (to & SET_ID & ~from) === 0) return permissions
  return { ...permissions, action: 'keep', reason: `its permissions (${octal(from)} now) left as they are: a rewind gives no setuid or setgid bit back to a file whose content it did not record; ${octal(to)} before` }
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
  if (item.before === null) return { ...item, action: 'remove', ...otherLinksNote(current.links, 'remove') }
  return { ...item, action: 'restore', ...otherLinksNote(current.links, 'restore') }
}

/**
 * A file with other hard links (`ln ~/notes.txt .`, then the turn wrote it) is restored by a
 * rename, never written in place; one the turns created (`ln new.txt ~/kept.txt`) is removed by
 * its name alone. Either way the other names, perhaps outside the workspace, keep what the turns
 * left, and a person should know that one rewind did not undo it everywhere.
 */
function otherLinksNote(links: number, action: 'restore' | 'remove'): { reason?: string } {
  if (links <= 1) return {}
  const others = links - 1
  // The plan does not know which names those are: some may be files this rewind undoes too.
  const who = others === 1 ? 'another name of this file (a hard link) keeps' : `${others} other names of this file (hard links) keep`
  const them = others === 1 ? 'it' : 'them'
  if (action === 'remove') return { reason: `${who} what the turns left unless this rewind undoes ${them} too: only this name is removed` }
  return { reason: `${who} what the turns left unless this rewind restores ${them} too: this name gets a file of its own` }
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

type Current = { kind: 'file'; hash: string | null; links: number } | { kind: 'other'; reason: string }

/** The file's content hash (`null`: absent), or why it is not a plain file rewind may touch. */
async function currentContent(file: string): Promise<Current> {
  const current = await currentKind(file)
  if (current.kind === 'absent') return { kind: 'file', hash: null, links: 0 }
  if (current.kind === 'other') return current
  return { kind: 'file', hash: contentHash(await readFile(file)), links: current.links }
}

type Kind = { kind: 'absent' } | { kind: 'file'; mode: number; links: number } | { kind: 'other'; reason: string }

/** What stands at `file`: nothing, a regular file (with its permission bits), or something rewind may not touch, and why. */
async function currentKind(file: string): Promise<Kind> {
  let stats
  try {
    stats = await lstat(file)
  } catch (error) {
    if (isMissing(error)) return { kind: 'absent' }
    throw error
  }
  if (stats.isSymbolicLink()) return { kind: 'other', reason: 'is now a symbolic link' }
  if (!stats.isFile()) return { kind: 'other', reason: stats.isDirectory() ? IS_NOW_A_DIRECTORY : 'is not a regular file' }
  return { kind: 'file', mode: stats.mode & 0o7777, links: stats.nlink }
}

/** The permission bits of the regular file at `file`; `undefined` when none stands there. */
async function modeNow(file: string): Promise<number | undefined> {
  const current = await currentKind(file)
  return current.kind === 'file' ? current.mode : undefined
}

/** Whether an fs error says the path (or a parent) does not exist. */
export function isMissing(error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined
  return code === 'ENOENT' || code === 'ENOTDIR'
}
