/**
 * Containment: turns a path the model gave into a checked location inside the workspace root (or,
 * for reading, inside the session's spill folder). Every path is checked lexically first, then by
 * its real path, so `..`, absolute paths and symbolic links cannot lead outside.
 */

import { lstat, readdir, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path'
import { closest, cutHead, type ReinError } from '@rein/base'
import { fromSystemError, fsError, systemCode } from './errors.ts'

/** Where one call may look: the workspace root, and the spill folder it may only read. */
export interface Scope {
  /** The root as configured or given by the run. */
  readonly root: string
  /** The root with symbolic links resolved: what every real path is checked against. */
  readonly rootReal: string
  /** The session's spill folder (read-only), when the run has one and it exists. */
  readonly spill?: { readonly folder: string; readonly real: string }
  /** The shell's name for its working folder (`$PWD`) when that is a link into the workspace, and where it leads. */
  readonly alias?: { readonly name: string; readonly real: string }
}

/** A path that passed the checks. */
export interface Resolved {
  /** Absolute, as written (`..` removed, links not followed). */
  readonly absolute: string
  /** With every symbolic link resolved; for a missing file, its real folder plus its name. */
  readonly real: string
  /** What the model is shown: relative to the root, or absolute for a spilled file. */
  readonly display: string
  readonly exists: boolean
  readonly area: 'workspace' | 'spill'
  /** The real folder this path must stay in: the root's, or the spill folder's. */
  readonly allowed: string
}

/** `read` may look in the spill folder; `write` may not, and gets a writable place only. */
export type Access = 'read' | 'write'

const MAX_PATH_CHARS = 4096
const MAX_NAME_BYTES = 255
/** Characters a name may use to look like `.`, `..` or a separator without being one (beyond what NFKC folds). */
const LOOK_ALIKES: Record<string, string> = { '\u2215': '/', '\u2044': '/', '\u29F8': '/', '\u3002': '.' }

/** Resolves the root (and spill folder) once per call. */
export async function openScope(root: string, spillFolder: string | undefined): Promise<Scope> {
  let rootReal: string
  try {
    rootReal = await realpath(root)
  } catch (error) {
    throw fsError('FILE_NOT_FOUND', `the workspace root ${root} cannot be used (${systemCode(error) ?? String(error)})`, { root }, error)
  }
  const alias = await pwdAlias(root, rootReal)
  const base = alias === undefined ? { root, rootReal } : { root, rootReal, alias }
  if (spillFolder === undefined) return base
  // The folder is made on the first spill; until then there is nothing in it to read.
  const spillReal = await realpath(spillFolder).catch(() => undefined)
  return spillReal === undefined ? base : { ...base, spill: { folder: resolve(spillFolder), real: spillReal } }
}

/**
 * `$PWD` when it names the workspace (or a folder in it) through a link: rein started in a link
 * to the workspace, so a model that ran `pwd` names files by it. Only this name is followed before
 * the checks; any other path outside the root is refused by its name, without touching the disk.
 */
async function pwdAlias(root: string, rootReal: string): Promise<Scope['alias']> {
  const pwd = process.env.PWD
  if (!pwd || !isAbsolute(pwd)) return undefined
  const name = normalize(pwd)
  if (within(root, name) || within(rootReal, name)) return undefined
  const real = await realpath(name).catch(() => undefined)
  return real !== undefined && within(rootReal, real) ? { name, real } : undefined
}

/** `path` is `base` or below it (both absolute and normalized). */
export function within(base: string, path: string): boolean {
  if (path === base) return true
  return path.startsWith(base.endsWith(sep) ? base : base + sep)
}

/**
 * Checks `input` and finds where it really leads. Throws `INVALID_PATH` for a malformed path and
 * `PATH_OUTSIDE_WORKSPACE` for one that leads, lexically or through a link, outside what `access`
 * allows. Does not require the file to exist.
 */
export async function resolvePath(scope: Scope, input: string, access: Access): Promise<Resolved> {
  checkSyntax(input)
  const given = isAbsolute(input) ? normalize(input) : resolve(scope.root, input)
  const { absolute, place } = placeThroughAlias(scope, given, access)
  if (place === undefined) throw outside(input, scope, 'is')
  const { area, allowed } = place
  const display = area === 'spill' ? absolute : relative(within(scope.root, absolute) ? scope.root : scope.rootReal, absolute) || '.'
  const { real, exists } = await realPathOf(absolute, display, scope, access)
  if (!exists) await refuseHomeTilde(input, display, scope, access)
  if (!within(allowed, real)) throw outside(display, scope, 'leads', ' through a symbolic link')
  if (access === 'write' && scope.spill && within(scope.spill.real, real)) {
    throw fsError('PATH_OUTSIDE_WORKSPACE', `${display} is in the folder of saved tool output, which is read-only`, { path: display })
  }
  return { absolute, real, display, exists, area, allowed }
}

/**
 * Where `given` is, by its name; a path under the shell's `$PWD` that is a link into the workspace
 * (`Scope.alias`) is named by where that link leads. The real-path check after this still holds it inside.
 */
function placeThroughAlias(scope: Scope, given: string, access: Access) {
  const place = placeOf(scope, given, access)
  const { alias } = scope
  if (place !== undefined || alias === undefined || !within(alias.name, given)) return { absolute: given, place }
  const absolute = join(alias.real, relative(alias.name, given))
  return { absolute, place: placeOf(scope, absolute, access) }
}

/** Which area `absolute` is in, lexically, and the real folder its real path must then stay in. */
function placeOf(scope: Scope, absolute: string, access: Access): { area: Resolved['area']; allowed: string } | undefined {
  if (within(scope.root, absolute) || within(scope.rootReal, absolute)) return { area: 'workspace', allowed: scope.rootReal }
  const { spill } = scope
  if (access === 'read' && spill && (within(spill.folder, absolute) || within(spill.real, absolute))) return { area: 'spill', allowed: spill.real }
  return undefined
}

/** `<path> is outside the workspace (<root>)[ how]`: the root right after the word it names. */
function outside(path: string, scope: Scope, verb: 'is' | 'leads', how = '') {
  return fsError(
    'PATH_OUTSIDE_WORKSPACE',
    `${cutHead(path, 200)} ${verb} outside the workspace (${scope.root})${how}; use a path inside it, relative to it or absolute`,
    { path: cutHead(path, 200), root: scope.root },
  )
}

/** Refuses what no honest path holds: NUL bytes, backslashes, overlong names, look-alikes of `..` and `/`. */
function checkSyntax(input: string) {
  const shown = JSON.stringify(cutHead(input, 80))
  if (input.length === 0) throw fsError('INVALID_PATH', 'the path is empty')
  if (input.includes('\0')) throw fsError('INVALID_PATH', `the path ${shown} contains a NUL byte`)
  if (input.includes('\\')) throw fsError('INVALID_PATH', `the path ${shown} contains a backslash; separate folders with /`)
  if (input.length > MAX_PATH_CHARS) throw fsError('INVALID_PATH', `the path is ${input.length} characters long; the limit is ${MAX_PATH_CHARS}`)
  for (const name of input.split('/')) {
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
      throw fsError('INVALID_PATH', `a name in ${shown} is ${Buffer.byteLength(name)} bytes long; the file system allows ${MAX_NAME_BYTES}`)
    }
    const folded = name.normalize('NFKC').replace(/[\u2215\u2044\u29F8\u3002]/g, (char) => LOOK_ALIKES[char] ?? char)
    if (folded !== name && (folded === '.' || folded === '..' || /[/\\]/.test(folded))) {
      throw fsError('INVALID_PATH', `the name ${JSON.stringify(name)} in ${shown} looks like ${JSON.stringify(folded)} but is made of other characters; write paths in plain ASCII dots and slashes`)
    }
  }
}

/** Looks at a name that changed between two looks (a link made a folder, say) before giving up. */
const LOOKS_AT_A_CHANGING_NAME = 3

/** The real path of `absolute`, or of its nearest existing folder plus the missing names. */
async function realPathOf(absolute: string, display: string, scope: Scope, access: Access): Promise<{ real: string; exists: boolean }> {
  const missing: string[] = []
  let current = absolute
  let changes = 0
  for (;;) {
    try {
      const real = await realpath(current)
      return { real: missing.length === 0 ? real : join(real, ...missing), exists: missing.length === 0 }
    } catch (error) {
      const code = systemCode(error)
      if (code !== 'ENOENT') throw fromSystemError(error, access, display)
    }
    if (await refuseDanglingLink(current, display, scope) === 'changed') {
      if (++changes < LOOKS_AT_A_CHANGING_NAME) continue
      throw fsError(access === 'write' ? 'WRITE_FAILED' : 'READ_FAILED', `${display} kept changing while it was looked up (a link replaced by a folder or a file, or the reverse); nothing was ${access === 'write' ? 'written' : 'read'}; try again once it is left alone`, { path: display })
    }
    const parent = dirname(current)
    if (parent === current) throw fsError('FILE_NOT_FOUND', `${display} cannot be reached`, { path: display })
    missing.unshift(basename(current))
    current = parent
  }
}

/**
 * A missing path that starts with `~` when the workspace has no `~`: the model meant its home
 * folder, which no shell expands here. Written as given, it would make a folder named `~` in the
 * workspace and answer "Created ~/…", as if the home folder had the file.
 */
async function refuseHomeTilde(input: string, display: string, scope: Scope, access: Access) {
  if (input !== '~' && !input.startsWith('~/')) return
  if (await lstat(join(scope.root, '~')).then(() => true, () => false)) return
  const why = `~ is not your home folder here: paths are taken relative to the workspace root (${scope.root}), which has no folder named ~, and files outside the workspace cannot be ${access === 'write' ? 'written' : 'read'}`
  if (access === 'write') throw fsError('INVALID_PATH', `${cutHead(display, 200)}: ${why}; write a path inside the workspace`, { path: display })
  throw fsError('FILE_NOT_FOUND', `${cutHead(display, 200)} does not exist: ${why}`, { path: display })
}

/**
 * A link whose target is missing: following it later could create a file wherever it points.
 * `changed` when the link stopped being one between the two looks at it: its path is resolved again.
 */
async function refuseDanglingLink(path: string, display: string, scope: Scope): Promise<'changed' | undefined> {
  const info = await lstat(path).catch(() => undefined)
  if (!info?.isSymbolicLink()) return undefined
  const link = await readlink(path).catch(() => undefined)
  if (link === undefined) return 'changed'
  const target = resolve(dirname(path), link)
  if (!within(scope.rootReal, target) && !within(scope.root, target)) {
    throw outside(display, scope, 'leads', ' through a symbolic link')
  }
  throw fsError('NOT_A_REGULAR_FILE', `${display} goes through a symbolic link to something that does not exist; use the real path`, { path: display })
}

/** `FILE_NOT_FOUND` for a resolved path, naming the nearest existing name beside it when one is close. */
export async function notFound(resolved: Resolved): Promise<ReinError> {
  const names = await readdir(dirname(resolved.real)).catch(() => [] as string[])
  const near = closest(basename(resolved.real), names)
  // Its own name: it came back since the look that missed it (another process at work), no other name to suggest.
  const hint = near === undefined || near === basename(resolved.real) ? '' : `; did you mean ${join(dirname(resolved.display), near)}?`
  return fsError('FILE_NOT_FOUND', `${resolved.display} does not exist${hint}`, { path: resolved.display })
}

