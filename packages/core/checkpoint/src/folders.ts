/**
 * The folders a write made for its file (`mkdir -p`, recorded as `createdFolders`), the folders
 * a command made with nothing in them and the empty ones it removed (`folder` records, each its
 * own plan item). A rewind that takes the file away (or undoes the command) removes the made ones
 * too, deepest first, each only when it is empty: one that holds anything else (a person's file or
 * folder), or is no longer a plain folder, stays, and the item says why; it makes the removed ones
 * again. A folder item is judged by what stands at its path once the files are undone. A plan
 * foresees the same from what stands there now and what the plan removes.
 */

import { constants, type Dirent } from 'node:fs'
import { lstat, mkdir, open, readdir, realpath, rmdir } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { listedPath, thrownMessage } from '@rein/base'
import { absentAsBefore, blockedByKind, filesBack, firstNonFolder } from './blocked.ts'
import { parentProblem } from './parents.ts'
import { IS_NOW_A_DIRECTORY, isMissing } from './plan.ts'
import type { CheckpointRecord, FailedItem, PlanFolder, PlanItem } from './types.ts'

/** The records behind an item (the service keeps them by file). */
export type RecordsOf = (item: PlanItem) => readonly CheckpointRecord[]

/**
 * What became of one folder, and when it stays, what keeps it: something in it (or a file going
 * back into it), that it is no longer a plain folder, or a removal that failed. A folder item's
 * own outcome decides how the item is reported.
 */
interface Outcome {
  readonly folder: PlanFolder
  readonly kept?: 'holds' | 'unsafe' | 'failed' | 'back'
}

/** What became of each folder, by absolute path; `undefined`: it is not there any more. */
type Outcomes = Map<string, Outcome | undefined>

/**
 * Plans a folder item from its `folder` records (newest first), which goes back to what the oldest
 * says stood there before. A folder a command made: `remove` while a plain folder stands there
 * (whether it is empty once the rest is undone is `foreseeFolders`'s to say), `already` when it is
 * gone. An empty folder a command removed (`existed`): `restore` when it is gone, `already` while a
 * folder stands there. Either is `skipped` when its path, or a folder above it, is now something
 * else (a file, a link), unless that is a file in `removed`, which the rewind takes away first.
 */
export async function planFolder(root: string, path: string, records: readonly CheckpointRecord[], removed: ReadonlySet<string> = new Set()): Promise<PlanItem> {
  const oldest = records.at(-1)
  const existed = oldest?.existed === true
  // The command whose change the rewind undoes: the oldest one recorded.
  const by = records.findLast((record) => record.by !== undefined)?.by
  const made = by === undefined ? 'a folder made by a rewound turn' : `a folder made while \`${by}\` ran`
  const gone = by === undefined ? 'an empty folder a rewound turn removed' : `an empty folder removed while \`${by}\` ran`
  const item = {
    root, path, file: resolve(root, path), folder: true as const, before: null, after: null, seqs: records.map((record) => record.seq),
    // Said in the reason, not as `changedWhile`: nothing in a folder a command made is a person's edit to keep.
    reason: existed ? gone : made,
    ...(existed ? { existed: true as const, ...(oldest?.mode === undefined ? {} : { mode: oldest.mode }) } : {}),
  }
  const standing = await standingAs(root, item.file, removed)
  if (standing.kind === 'other') return { ...item, action: 'skipped', reason: `${item.reason}; ${standing.reason}` }
  if (standing.kind === 'gone') return { ...item, action: existed ? 'restore' : 'already' }
  return { ...item, action: existed ? 'already' : 'remove' }
}

/**
 * `items` as a plan shows them: each file going back to absent with what rewind will do with the
 * folders made for it; and a file going back to absent where a folder stands now (or a file stands
 * in place of its folder) `already` when the rewind takes that away, or the folder is one going back.
 */
export async function foreseeFolders(items: readonly PlanItem[], recordsOf: RecordsOf): Promise<PlanItem[]> {
  const blocked = items.filter((item) => item.before === null && blockedByKind(item))
  const made = madeFoldersOf([...items.filter((item) => item.action === 'remove' || item.action === 'already'), ...blocked], recordsOf)
  const removed = new Set(items.filter((item) => item.action === 'remove').map((item) => item.file))
  const back = foldersBack(items)
  const standing = filesBack(items)
  // Files going back to a content: rewind writes them before it looks at the folders.
  const returning = items.filter((item) => item.action === 'restore' && item.before !== null).map((item) => item.file)
  const outcomes: Outcomes = new Map()
  for (const [folder, root] of deepestFirst(made)) {
    const inside = returning.find((file) => file.startsWith(`${folder}${sep}`))
    outcomes.set(folder, isBack(back, folder) ? kept(root, folder, WAS_THERE, 'back')
      : inside === undefined ? await foresee(root, folder, removed, outcomes)
        : kept(root, folder, `${listedPath(relative(folder, inside).split(sep).join('/'))} goes back into it`, 'holds'))
  }
  // Decided first, then noted in the plan's order: a folder several items share is named on the first.
  const decided = await Promise.all(items.map(async (item): Promise<{ item: PlanItem; folders?: readonly string[] }> => {
    if (!blocked.includes(item)) return { item, folders: made.get(item) }
    // What stands in its way is what stood there before the turns: the folders made for it are gone.
    if (await absentAsBefore(item, standing)) return { item: absentAlready(item) }
    const clears = item.reason === IS_NOW_A_DIRECTORY
      ? outcomes.get(item.file)?.folder.action === 'remove' || back.has(item.file)
      : removed.has(await firstNonFolder(item.root, dirname(item.file)) ?? '')
    return clears ? { item: absentAlready(item), folders: made.get(item) } : { item }
  }))
  const noted = new Set<string>()
  return decided.map(({ item, folders }) => withFolders(item, folders, outcomes, 'plan', noted))
}

/** A file going back to absent that is absent once what stood in its way is undone (or stands there rightly: a folder going back). */
export function absentAlready(item: PlanItem): PlanItem {
  const { reason: _reason, ...rest } = item
  return { ...rest, action: 'already' }
}

/** Whether `folder` stands once the rewind is done because it, or a folder inside it, was there before the turn. */
function isBack(back: ReadonlySet<string>, folder: string): boolean {
  if (back.has(folder)) return true
  for (const path of back) if (path.startsWith(`${folder}${sep}`)) return true
  return false
}

/** Why a made folder stays that is also one a command removed that goes back. */
const WAS_THERE = 'was there before the turn'

/** The folders that stand once the rewind is done because they were there before it (`existed` folder items made again or already back). */
export function foldersBack(items: readonly PlanItem[]): Set<string> {
  return new Set(items.filter((item) => item.folder && item.existed && (item.action === 'restore' || item.action === 'already')).map((item) => item.file))
}

/**
 * Removes the folders made for `items` (files rewind removed, or found already absent: a rewind
 * killed before their folders went; and folder items), deepest first, each only when empty, never
 * one in `back` (a folder a command removed, made again). Returns each item as done: a folder
 * item with the action its own folder's outcome gives it (`remove`: removed, `already`,
 * `drifted`, `skipped`), or failed (`error`) when it could not be removed.
 */
export async function removeMadeFolders(items: readonly PlanItem[], recordsOf: RecordsOf, back: ReadonlySet<string>): Promise<Map<PlanItem, PlanItem | FailedItem>> {
  const made = madeFoldersOf(items, recordsOf)
  const outcomes: Outcomes = new Map()
  for (const [folder, root] of deepestFirst(made)) outcomes.set(folder, isBack(back, folder) ? kept(root, folder, WAS_THERE, 'back') : await removeIfEmpty(root, folder))
  // Noted in the plan's order (newest first), so the result names each folder on the row its plan did.
  const noted = new Set<string>()
  const byNewest = [...items].sort((a, b) => (b.seqs[0] ?? 0) - (a.seqs[0] ?? 0))
  return new Map(byNewest.map((item) => [item, withFolders(item, made.get(item), outcomes, 'done', noted)]))
}

/**
 * Makes again an empty folder a command removed (an `existed` folder item planned `restore`), and
 * the folders above it that are gone, as `mkdir -p` makes them (0777 less the umask, as for a
 * file's); `setMadeModes` gives it its recorded mode once all are made (one without keeps that). Checked again at the last moment, never made through a
 * link: `already` when a folder stands there (even one made since the check: it is left as it is),
 * `skipped` when something else does or a folder above became a link; failed (`error`) when it
 * cannot be made.
 */
export async function makeFolder(item: PlanItem): Promise<PlanItem | FailedItem> {
  const standing = await standingAs(item.root, item.file)
  if (standing.kind === 'folder') return { ...item, action: 'already' }
  if (standing.kind === 'other') return { ...item, action: 'skipped', reason: `${item.reason}; ${standing.reason}` }
  try {
    // As `mkdir -p` makes them (0777 less the umask): nothing recorded the modes of the folders above.
    await mkdir(dirname(item.file), { recursive: true })
    // The parents again, now made: one swapped for a link since the check is not made through.
    const unsafe = parentProblem(item.root, item.file)
    if (unsafe !== undefined) return { ...item, action: 'skipped', reason: `${item.reason}; ${unsafe}` }
    try {
      // Not recursive: a folder someone made since the check is theirs, left as it is (mode included).
      await mkdir(item.file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { ...item, action: 'already' }
      throw error
    }
    // Made through a link swapped in at the last moment: undone (it is empty, and ours), never chmodded.
    if (await realpath(dirname(item.file)) !== await realpath(item.root).then((root) => join(root, dirname(item.path)))) {
      await rmdir(item.file).catch(() => undefined)
      return { ...item, action: 'skipped', reason: `${item.reason}; a folder above it became a link while it was made` }
    }
    return item
  } catch (error) {
    return { ...item, error: `could not be made again: ${said(error)}` }
  }
}

/** Gives the folders `makeFolder` made their recorded modes, deepest first: a folder made inside another is made before its parent may lose write. */
export async function setMadeModes(made: readonly (PlanItem | FailedItem)[]): Promise<Map<PlanItem, FailedItem>> {
  const failed = new Map<PlanItem, FailedItem>()
  const depth = (item: PlanItem) => item.file.split(sep).length
  for (const item of [...made].filter((each) => !('error' in each) && each.action === 'restore').sort((a, b) => depth(b) - depth(a))) {
    const { mode } = item
    if (mode === undefined) continue
    // The parents again: one swapped for a link since the folder was made is not chmodded through.
    const unsafe = parentProblem(item.root, item.file)
    if (unsafe !== undefined) {
      failed.set(item, { ...item, error: `was made again, but its mode was not set: ${unsafe}` })
      continue
    }
    try {
      await setFolderMode(item.file, mode)
    } catch (error) {
      failed.set(item, { ...item, error: `was made again, but its mode could not be set: ${said(error)}` })
    }
  }
  return failed
}

/** Sets a folder's mode exactly (no umask), through a handle that refuses a link put there meanwhile. */
async function setFolderMode(folder: string, mode: number): Promise<void> {
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
  try {
    await handle.chmod(mode)
  } finally {
    await handle.close()
  }
}

/** Each item's made folders (absolute, deepest first), for items that have any. */
function madeFoldersOf(items: readonly PlanItem[], recordsOf: RecordsOf): Map<PlanItem, string[]> {
  const made = new Map<PlanItem, string[]>()
  for (const item of items) {
    const folders = madeFolders(item, recordsOf(item))
    if (folders.length > 0) made.set(item, folders)
  }
  return made
}

/**
 * The folders the records made for a file that goes back to absent: as many of its folders, up
 * from its own, as any record made. One that goes back to a content (or keeps it, its mode alone
 * going back) needs its folders: none. A
 * folder item's start with the folder itself.
 */
function madeFolders(item: PlanItem, records: readonly CheckpointRecord[]): string[] {
  if (item.before !== null || item.existed || item.modeOnly) return []
  const count = Math.max(0, ...records.map((record) => record.createdFolders ?? 0)) + (item.folder ? 1 : 0)
  const folders: string[] = []
  // Never the root or above it, whatever a record says.
  for (let folder = item.folder ? item.file : dirname(item.file); folders.length < count && isBelow(item.root, folder); folder = dirname(folder)) folders.push(folder)
  return folders
}

function isBelow(root: string, folder: string): boolean {
  const inside = relative(root, folder)
  return inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside)
}

/** Every made folder once, with its root, deepest first: a folder is decided after everything made inside it. */
function deepestFirst(made: ReadonlyMap<PlanItem, readonly string[]>): [string, string][] {
  const roots = new Map<string, string>()
  for (const [item, folders] of made) for (const folder of folders) roots.set(folder, item.root)
  const depth = (folder: string) => folder.split(sep).length
  return [...roots].sort(([a], [b]) => depth(b) - depth(a) || (a < b ? -1 : a > b ? 1 : 0))
}

/** What rewind will do with `folder`: remove it when it holds only files the plan removes and made folders that go too. */
async function foresee(root: string, folder: string, removed: ReadonlySet<string>, outcomes: Outcomes): Promise<Outcome | undefined> {
  const standing = await standingAs(root, folder, removed)
  if (standing.kind === 'gone') return undefined
  if (standing.kind === 'other') return kept(root, folder, standing.reason, 'unsafe')
  let entries: Dirent[]
  try {
    entries = await readdir(folder, { withFileTypes: true })
  } catch (error) {
    return kept(root, folder, `could not be read: ${said(error)}`, 'unsafe')
  }
  const goes = (entry: Dirent) => {
    const path = join(folder, entry.name)
    return entry.isFile() ? removed.has(path) : entry.isDirectory() && outcomes.get(path)?.folder.action === 'remove'
  }
  const left = entries.filter((entry) => !goes(entry))
  return left.length === 0 ? { folder: folderItem(root, folder) } : kept(root, folder, holding(left), 'holds')
}

/** Removes `folder` when it is empty; otherwise says what keeps it. `undefined` when it is gone. */
async function removeIfEmpty(root: string, folder: string): Promise<Outcome | undefined> {
  // Again at the last moment: a folder that became a link since the plan looked is never acted through.
  const standing = await standingAs(root, folder)
  if (standing.kind === 'gone') return undefined
  if (standing.kind === 'other') return kept(root, folder, standing.reason, 'unsafe')
  try {
    // rmdir removes only an empty folder: a file a person put there since the check keeps it.
    await rmdir(folder)
    return { folder: folderItem(root, folder) }
  } catch (error) {
    if (isMissing(error)) return undefined
    // Not empty, or not ours to remove (a folder above it is read-only): either way it stays, and the rest goes on.
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
    return entries.length > 0 ? kept(root, folder, holding(entries), 'holds') : kept(root, folder, `could not be removed: ${said(error)}`, 'failed')
  }
}

type Standing = { kind: 'folder' } | { kind: 'gone' } | { kind: 'other'; reason: string }

/**
 * Whether a plain folder stands at `folder`, reached through plain folders from the root; as `gone`
 * when what stands in its way (there, or in place of a folder above it) is a file in `removed`,
 * which the rewind takes away before it looks at folders.
 */
async function standingAs(root: string, folder: string, removed: ReadonlySet<string> = new Set()): Promise<Standing> {
  const standing = await standingNow(root, folder)
  if (standing.kind !== 'other' || removed.size === 0) return standing
  const inTheWay = await firstNonFolder(root, folder)
  return inTheWay !== undefined && removed.has(inTheWay) ? { kind: 'gone' } : standing
}

async function standingNow(root: string, folder: string): Promise<Standing> {
  const unsafe = parentProblem(root, folder)
  if (unsafe !== undefined) return { kind: 'other', reason: unsafe }
  try {
    const stats = await lstat(folder)
    if (stats.isSymbolicLink()) return { kind: 'other', reason: 'is now a symbolic link' }
    return stats.isDirectory() ? { kind: 'folder' } : { kind: 'other', reason: 'is now not a folder' }
  } catch (error) {
    return isMissing(error) ? { kind: 'gone' } : { kind: 'other', reason: `could not be read: ${said(error)}` }
  }
}

/** A folder's outcome: removed, or kept for `reason`. */
function folderItem(root: string, folder: string, reason?: string): PlanFolder {
  const path = relative(root, folder).split(sep).join('/')
  return reason === undefined ? { path, folder, action: 'remove' } : { path, folder, action: 'keep', reason }
}

function kept(root: string, folder: string, reason: string, why: NonNullable<Outcome['kept']>): Outcome {
  return { folder: folderItem(root, folder, reason), kept: why }
}

/** `holds a.txt, b.txt, c/ and 2 more`: what keeps a folder, folders marked with a slash. */
function holding(entries: readonly Dirent[]): string {
  // Quoted when a name could break the reason's line or reorder it.
  const names = entries.map((entry) => listedPath(entry.isDirectory() ? `${entry.name}/` : entry.name)).sort()
  const shown = names.slice(0, 3).join(', ')
  return `holds ${names.length > 3 ? `${shown} and ${names.length - 3} more` : shown}`
}

/**
 * The item with its folders' outcomes, and a note on them in `reason` (what a table of the plan or
 * result shows). A folder in `noted` was named on an earlier item (files a command made in one new
 * folder all made it): it stays in `folders` but is not named again.
 */
function withFolders(item: PlanItem, made: readonly string[] | undefined, outcomes: Outcomes, tense: 'plan' | 'done', noted: Set<string>): PlanItem | FailedItem {
  if (made === undefined) return item
  if (item.folder) return asFolderItem(item, made, outcomes, tense, noted)
  const folders = made.map((folder) => outcomes.get(folder)?.folder).filter((folder) => folder !== undefined)
  if (folders.length === 0) return item
  const note = folderNote(folders, tense, noted)
  return { ...item, folders, ...(note === undefined ? {} : { reason: item.reason === undefined ? note : `${item.reason}; ${note}` }) }
}

/**
 * A folder item as its own folder's outcome makes it: gone is `already`, kept for what it holds is
 * `drifted`, kept for no longer being a plain folder is `skipped`, a failed removal is failed; the
 * note names what became of the folders made above it.
 */
function asFolderItem(item: PlanItem, made: readonly string[], outcomes: Outcomes, tense: 'plan' | 'done', noted: Set<string>): PlanItem | FailedItem {
  const [own, ...above] = made.map((folder) => outcomes.get(folder))
  const others = above.map((outcome) => outcome?.folder).filter((folder) => folder !== undefined)
  const folders = own === undefined ? others : [own.folder, ...others]
  const why = own?.kept === 'holds' || own?.kept === 'unsafe' ? own.folder.reason : undefined
  // A failed item's row shows its error, not its reason: the folders above are left for another to name.
  const note = folderNote(others, tense, own?.kept === 'failed' ? new Set(noted) : noted)
  const reason = [item.reason, why, note].filter((part) => part !== undefined).join('; ')
  const done = { ...item, reason, ...(folders.length > 0 ? { folders } : {}) }
  if (own === undefined) return { ...done, action: 'already' }
  if (own.kept === 'failed') return { ...done, error: own.folder.reason ?? 'could not be removed' }
  if (own.kept === 'back') return { ...done, action: 'already' }
  if (own.kept !== undefined) return { ...done, action: own.kept === 'holds' ? 'drifted' : 'skipped' }
  return done
}

const VERBS = { plan: { remove: 'removes', keep: 'keeps' }, done: { remove: 'removed', keep: 'kept' } } as const

/**
 * `removes the folders made for it: a/b, a; keeps c (holds x.txt)` (`removed` … `kept` once done),
 * naming only the folders not in `noted` and adding them to it; undefined when none is left to name.
 */
function folderNote(folders: readonly PlanFolder[], tense: 'plan' | 'done', noted: Set<string>): string | undefined {
  const fresh = folders.filter((folder) => !noted.has(folder.folder))
  for (const folder of fresh) noted.add(folder.folder)
  const verbs = VERBS[tense]
  const removed = fresh.filter((folder) => folder.action === 'remove').map((folder) => listedPath(folder.path))
  const kept = fresh.filter((folder) => folder.action === 'keep').map((folder) => `${listedPath(folder.path)} (${folder.reason})`)
  const parts = []
  if (removed.length > 0) parts.push(`${verbs.remove} the folder${removed.length === 1 ? '' : 's'} made for it: ${removed.join(', ')}`)
  if (kept.length > 0) parts.push(`${verbs.keep} ${kept.join(', ')}`)
  return parts.length > 0 ? parts.join('; ') : undefined
}

/** What a file-system call threw, in words. */
function said(error: unknown): string {
  return thrownMessage(error) ?? 'an unknown error'
}
