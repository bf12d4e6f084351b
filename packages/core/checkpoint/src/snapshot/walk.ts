/**
 * A workspace's index, brought up to date by a walk: every regular file's stat and content hash
 * (links, FIFOs, sockets, devices and names that are not valid UTF-8: their stat only).
 * Only files whose stat changed since the last walk are read; their content goes to the pack store.
 * The walk is the hot path of a snapshot (100 000 files twice around every command), so it uses
 * synchronous file calls (far cheaper than their promise forms), updates the index in place, and
 * asks the ignore rules only about paths it has not seen under the same rules. The event loop gets
 * a turn every few hundred entries, so a walk never freezes the process.
 */

import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, realpathSync, type Dirent, type Stats } from 'node:fs'
import { contentHash } from '../hash.ts'
import { parentProblem } from '../parents.ts'
import { IgnoreRules } from './ignore-rules.ts'
import type { PackStore } from './pack-store.ts'

/** A file's stat: what says whether it changed. */
interface FileStat {
  /** Permission bits (`mode & 0o7777`): a file rewind brings back gets them again. */
  readonly mode: number
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
}

/** A file as a walk saw it. `hash` is absent exactly when `gap` says why its content was not kept. */
export interface FileState extends FileStat {
  readonly hash?: string
  readonly gap?: string
  /** A symbolic link: indexed (so a file written over it is not taken for a new one; one in a file's place is that file's deletion), never read or followed. */
  readonly link?: true
  /** A FIFO, socket or device: indexed (one in a file's place is that file's deletion), never read. */
  readonly special?: true
}

/** The gap of a file whose name is not valid UTF-8: no string path names it, so nothing could restore it. */
const BAD_NAME = 'its name is not valid UTF-8 (not kept)'
/** The gap of such a folder: it is not walked, so what is in it is not covered either. */
const BAD_FOLDER_NAME = 'a folder whose name is not valid UTF-8 (not walked)'

/** A folder entry as the walk needs it; `raw`: the name's bytes, when they are not valid UTF-8 (`name` then escapes them). */
type Entry = Pick<Dirent, 'name' | 'isDirectory' | 'isFile'> & { readonly raw?: Buffer }

/** What one walk found changed since the one before it. */
export interface WalkChanges {
  /** When the walk before this one started; `undefined` for a root's first walk (which finds no changes). */
  readonly since: number | undefined
  /**
   * New files, each with whether it may merely have been revealed (it or a folder above it was
   * ignored in the last walk, so it may have been there all along), and how many of its folders,
   * up from its own, are new too: made for it, as `mkdir -p` would.
   */
  readonly created: readonly (readonly [string, FileState, boolean, number])[]
  readonly changed: readonly (readonly [string, FileState, FileState])[]
  /**
   * New folders with nothing in them (`mkdir -p build/out`: no created file's count takes them in),
   * each with how many folders above it are new too. Not one that may merely have been revealed.
   */
  readonly made: readonly (readonly [string, number])[]
  /** Files no longer walked. Absent from the disk, or newly ignored: the caller checks. */
  readonly deleted: readonly (readonly [string, FileState])[]
  /**
   * Folders no longer walked that held nothing at all when last listed (`rmdir old`; of an empty
   * tree, its deepest folders), each with its permission bits then. Absent from the disk, or newly
   * ignored: the caller checks.
   */
  readonly removed: readonly (readonly [string, number])[]
  /** The walk stopped at `maxFiles`: files in folders it did not reach are not reported deleted. */
  readonly truncated: boolean
}

/** How a root is walked. */
export interface WalkOptions {
  /** gitignore-syntax patterns applied at the root, on top of the `.gitignore` files. */
  readonly ignore: readonly string[]
  readonly maxFileBytes: number
  readonly maxFiles: number
  /** Absolute folders never entered (rein's own home, say). */
  readonly exclude: ReadonlySet<string>
  readonly store: PackStore
}

interface Folder {
  readonly files: Map<string, FileState>
  seen: number
  /** Its permission bits, when its last listing was empty: should it go, a rewind makes it again with them. */
  emptyMode?: number
}

const YIELD_EVERY = 500
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** One root's files by folder (relative, `/`-separated, `''` for the root) and name. */
export class WorkspaceIndex {
  private readonly _folders = new Map<string, Folder>()
  private readonly _rules: IgnoreRules
  private _walks = 0
  /** The store's generation at the last walk: while it stands, every hash the index holds is still stored. */
  private _storeGeneration = -1
  private _startedAt: number | undefined
  /** Paths the last walk skipped by the ignore rules: a file under one that appears now was revealed, not made. */
  private _ignored = new Set<string>()
  /** Whether the last walk stopped at the file cap. */
  private _truncated = false

  constructor(private readonly root: string, private readonly options: WalkOptions) {
    this._rules = new IgnoreRules(root, options.ignore)
  }

  /** The state of `path` as of the last walk. */
  get(path: string): FileState | undefined {
    const cut = path.lastIndexOf('/')
    return this._folders.get(cut < 0 ? '' : path.slice(0, cut))?.files.get(cut < 0 ? path : path.slice(cut + 1))
  }

  /** Walks the root (see the module comment) and reports what changed since the last walk. */
  async update(): Promise<WalkChanges> {
    const since = this._startedAt
    this._startedAt = Date.now()
    const walk = ++this._walks
    const verify = this._storeGeneration !== this.options.store.generation
    this._storeGeneration = this.options.store.generation
    const changes = {
      created: [] as [string, FileState, boolean, number][], changed: [] as [string, FileState, FileState][], deleted: [] as [string, FileState][],
      made: [] as [string, number][], removed: [] as [string, number][],
    }
    // A folder is checked against the ignore rules in full when its rules (or an ancestor's) are new or changed.
    const stack: [string, boolean][] = [['', false]]
    // Compared as the walk names folders, from the root's real path: rein's folder named through a link is still its own.
    const excluded = realPaths(this.options.exclude)
    const ignored = new Set<string>()
    /** Folders this walk is the first to list. */
    const fresh = new Set<string>()
    let files = 0
    let entriesSeen = 0
    let truncated = false
    walking: while (stack.length > 0) {
      const [folder, parentChanged] = stack.pop() ?? ['', false]
      const absolute = folder === '' ? this.root : `${this.root}/${folder}`
      // The root itself is walked even when it is rein's own folder: the person chose to work there.
      if (folder !== '' && excluded.has(absolute)) continue
      const entries = listFolder(absolute)
      if (entries === undefined) {
        // Not listable (no permission): what the index knows of it stands, nothing in it is taken for
        // deleted, and what appears in it once it can be listed may have been there all along.
        for (const [path, known] of this._folders) if (folder === '' || path === folder || path.startsWith(`${folder}/`)) known.seen = walk
        if (folder !== '') ignored.add(folder)
        continue
      }
      const rulesChanged = this._rules.enter(folder, entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) || parentChanged
      const known = this._folders.get(folder)
      const state = known ?? { files: new Map<string, FileState>(), seen: walk }
      state.seen = walk
      // Stat only an empty folder: only such a one is recorded when it goes, and folders with entries are the many.
      state.emptyMode = folder !== '' && entries.length === 0 ? modeOf(absolute) : undefined
      if (!known) {
        this._folders.set(folder, state)
        fresh.add(folder)
        if (folder !== '' && entries.length === 0 && !this.wasIgnored(folder)) changes.made.push([folder, newFolders(parentOf(folder), fresh)])
      }
      const met = new Set<string>()
      for (const entry of entries) {
        if (++entriesSeen % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
        const name = entry.name
        if (entry.isDirectory() && entry.raw === undefined) {
          const path = folder === '' ? name : `${folder}/${name}`
          if ((rulesChanged || !this._folders.has(path)) && this._rules.ignored(folder, name, true)) {
            ignored.add(path)
            continue
          }
          stack.push([path, rulesChanged])
          continue
        }
        const previous = state.files.get(name)
        if ((rulesChanged || !previous) && this._rules.ignored(folder, name, false)) {
          ignored.add(folder === '' ? name : `${folder}/${name}`)
          continue
        }
        if (++files > this.options.maxFiles) {
          truncated = true
          break walking
        }
        const now = entry.raw === undefined
          ? fileState(`${absolute}/${name}`, previous, this.options, verify)
          : unnamedState(Buffer.concat([Buffer.from(`${absolute}/`), entry.raw]), previous)
        if (!now) continue
        met.add(name)
        if (now === previous) continue
        state.files.set(name, now)
        const path = folder === '' ? name : `${folder}/${name}`
        if (!previous) {
          const revealed = this.wasIgnored(path)
          changes.created.push([path, now, revealed, revealed ? 0 : newFolders(folder, fresh)])
        }
        else changes.changed.push([path, previous, now])
      }
      for (const [name, was] of state.files) {
        if (met.has(name)) continue
        state.files.delete(name)
        this.notMet(changes, folder === '' ? name : `${folder}/${name}`, was, { verify, ignored })
      }
    }
    const cut = truncated || this._truncated
    this._truncated = truncated
    this._ignored = truncated ? new Set([...this._ignored, ...ignored]) : ignored
    // Folders the walk did not reach are not gone; only those it listed in full report deletions.
    if (!truncated) {
      for (const [folder, state] of this._folders) {
        if (state.seen === walk) continue
        this._folders.delete(folder)
        if (state.emptyMode !== undefined) changes.removed.push([folder, state.emptyMode])
        for (const [name, was] of state.files) this.notMet(changes, folder === '' ? name : `${folder}/${name}`, was, { verify, ignored })
      }
    }
    // A root's first walk builds the index; nothing changed "since" it.
    if (since === undefined) return { since, created: [], changed: [], deleted: [], made: [], removed: [], truncated }
    // Where the file cap cut this walk or the last, the cut moves as files come and go: a file (or
    // folder) new to the index may have been there all along, so none is reported created.
    return { since, ...changes, created: cut ? [] : changes.created, made: cut ? [] : changes.made, truncated }
  }

  /**
   * A file the index knew that this walk did not meet: deleted, or still there and newly ignored —
   * a command that wrote a `.gitignore` as it ran may have changed it too, and that change is its.
   * Either way the index forgets it. Only a path this walk's rules hide (`ignored`: it, or a folder
   * above it) is looked at on disk: a deletion costs no call, however many files a command removed.
   */
  private notMet(changes: { changed: [string, FileState, FileState][]; deleted: [string, FileState][] }, path: string, was: FileState, walk: { verify: boolean; ignored: ReadonlySet<string> }): void {
    const file = `${this.root}/${path}`
    // Through a folder that became a link, what stands there is no file of the workspace.
    const hidden = hiddenBy(walk.ignored, path) && parentProblem(this.root, file) === undefined
    const now = hidden ? fileState(file, was, this.options, walk.verify) : undefined
    if (now === undefined) changes.deleted.push([path, was])
    else if (now !== was) changes.changed.push([path, was, now])
  }

  /** Whether `path`, or a folder above it, was skipped by the ignore rules in the last walk. */
  private wasIgnored(path: string): boolean {
    return hiddenBy(this._ignored, path)
  }
}

/** How many folders, up from `folder` (the root never), are in `fresh`, stopping at the first that is not. */
function newFolders(folder: string, fresh: ReadonlySet<string>): number {
  let count = 0
  for (let current = folder; current !== '' && fresh.has(current); current = parentOf(current)) count++
  return count
}

/** `a/b` of `a/b/c`; `''` (the root) of `a`. */
function parentOf(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf('/'), 0))
}

/** The folder's entries; `undefined` when it cannot be listed (no permission, or gone meanwhile). */
/**
 * The folder's entries; `undefined` when it may not be listed (no permission): its contents are
 * unknown, not gone. A folder that is not there (removed, the root included) lists as empty.
 */
function listFolder(folder: string): Entry[] | undefined {
  try {
    const entries = readdirSync(folder, { withFileTypes: true })
    // A name that is not valid UTF-8 decodes with U+FFFD in it: listed again by bytes to tell them apart.
    return entries.some((entry) => entry.name.includes('\uFFFD')) ? byBytes(folder) : entries
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'EACCES' || code === 'EPERM' ? undefined : []
  }
}

/** Throws on bytes that are not UTF-8 (overlong forms and surrogates included); keeps a leading BOM. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The folder's entries by their bytes: a name that is not valid UTF-8 keeps them in `raw`, escaped in `name`. */
function byBytes(folder: string): Entry[] {
  return readdirSync(folder, { withFileTypes: true, encoding: 'buffer' }).map((entry) => {
    const raw = entry.name
    const kind = { isDirectory: () => entry.isDirectory(), isFile: () => entry.isFile() }
    return validUtf8(raw) ? { name: raw.toString('utf8'), ...kind } : { name: escapeBytes(raw), raw, ...kind }
  })
}

function validUtf8(bytes: Uint8Array): boolean {
  try {
    STRICT_UTF8.decode(bytes)
    return true
  } catch {
    return false
  }
}

/** `chg\xff.txt`: each byte outside a valid UTF-8 sequence as `\xNN`, the rest as it decodes. */
function escapeBytes(raw: Buffer): string {
  let name = ''
  for (let at = 0; at < raw.length;) {
    const size = sequenceAt(raw, at)
    name += size > 0 ? raw.toString('utf8', at, at + size) : `\\x${(raw[at] ?? 0).toString(16).padStart(2, '0')}`
    at += size > 0 ? size : 1
  }
  return name
}

/** The length of the valid UTF-8 sequence that starts at `at`, or 0. */
function sequenceAt(raw: Buffer, at: number): number {
  const lead = raw[at] ?? 0
  const size = lead < 0x80 ? 1 : lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0
  return size > 0 && at + size <= raw.length && validUtf8(raw.subarray(at, at + size)) ? size : 0
}

/**
 * A file or folder whose name is not valid UTF-8, by its bytes: stat only, as no string path reaches
 * it to restore it. Its coming, going and changing are reported as gaps; `undefined` when it vanished.
 */
function unnamedState(path: Buffer, previous: FileState | undefined): FileState | undefined {
  let stats: Stats
  try {
    stats = lstatSync(path)
  } catch {
    return undefined
  }
  if (previous && sameStat(previous, stats)) return previous
  return { ...statOf(stats), gap: stats.isDirectory() ? BAD_FOLDER_NAME : BAD_NAME }
}

/** What a non-file, non-folder, non-link is, as a gap says it. */
function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO'
  if (stats.isSocket()) return 'a socket'
  return 'a device'
}

/** A folder's permission bits; `undefined` when it vanished meanwhile. */
function modeOf(folder: string): number | undefined {
  try {
    const stats = lstatSync(folder)
    return stats.isDirectory() ? stats.mode & 0o7777 : undefined
  } catch {
    return undefined
  }
}

/** The file's state, reading it only when its stat changed; `undefined` when it vanished meanwhile. */
function fileState(file: string, previous: FileState | undefined, options: WalkOptions, verify: boolean): FileState | undefined {
  let stats: Stats
  try {
    stats = lstatSync(file)
  } catch {
    return undefined
  }
  if (stats.isSymbolicLink()) return previous?.link && sameStat(previous, stats) ? previous : { ...statOf(stats), gap: 'a symbolic link', link: true }
  if (stats.isDirectory()) return undefined
  if (!stats.isFile()) return previous?.special && sameStat(previous, stats) ? previous : { ...statOf(stats), gap: specialKind(stats), special: true }
  if (previous && !previous.link && !previous.special && sameStat(previous, stats) && (!verify || previous.hash === undefined || options.store.has(previous.hash))) return previous
  if (stats.size > options.maxFileBytes) return { ...statOf(stats), gap: `over the ${formatBytes(options.maxFileBytes)} size cap` }
  const content = readContent(file)
  if (content === undefined) return { ...statOf(stats), gap: 'could not be read' }
  const hash = contentHash(content.bytes)
  options.store.put(hash, content.bytes)
  // The stat the content was read under: a write racing the read shows up as a change next walk.
  return { ...content.stat, hash }
}

function readContent(file: string): { bytes: Uint8Array; stat: FileStat } | undefined {
  let fd: number
  try {
    fd = openSync(file, READ_FLAGS)
  } catch {
    return undefined
  }
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) return undefined
    return { bytes: readFileSync(fd), stat: statOf(stats) }
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

function statOf(stats: Stats): FileStat {
  return { mode: stats.mode & 0o7777, size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino }
}

/** Whether two stats describe the same content: the change time moves on every write and cannot be set back. */
function sameStat(a: FileStat, b: FileStat): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino
}

/** `8 MiB`, `512 KiB`, `100 B`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`
  return `${bytes} B`
}

/** Each path as its real path (links resolved) when it exists, else as given. */
function realPaths(paths: ReadonlySet<string>): Set<string> {
  const real = new Set<string>()
  for (const path of paths) {
    try {
      real.add(realpathSync.native(path))
    } catch {
      real.add(path)
    }
  }
  return real
}

/** Whether `path`, or a folder above it, is in `ignored` (what one walk skipped by the ignore rules). */
function hiddenBy(ignored: ReadonlySet<string>, path: string): boolean {
  for (let current = path; current !== ''; current = parentOf(current)) {
    if (ignored.has(current)) return true
  }
  return false
}
