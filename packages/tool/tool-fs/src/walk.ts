/**
 * Lists the files under a folder that match glob patterns, with tinyglobby: `.gitignore` rules
 * prune the walk as it goes (through tinyglobby's file-system hook), symbolic links are skipped,
 * and no folder whose real path is outside the workspace is ever listed.
 */

import { readdir, realpath, type Dirent } from 'node:fs'
import { resolve } from 'node:path'
import type { GlobOptions } from 'tinyglobby'
import { fsError } from './errors.ts'
import { GitignoreRules } from './gitignore.ts'
import { within, type Resolved, type Scope } from './workspace.ts'

export interface WalkRequest {
  /** The workspace's real root. */
  root: string
  /** The real folder to walk, inside `root`. */
  start: string
  patterns: string[]
  gitignore: boolean
  signal?: AbortSignal
}

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void

/** Absolute paths of matching regular files (as walked from `start`), sorted by code unit. */
export async function walkFiles(request: WalkRequest): Promise<string[]> {
  const rules = new GitignoreRules(request.root, request.gitignore)
  await rules.prime(request.start)
  const filtered = (path: string, options: unknown, callback: ReaddirCallback) => {
    // tinyglobby starts at a pattern's fixed prefix (`link/etc` in `link/etc/*`) without asking
    // whether a link leads there, so the folder's real path decides: outside the workspace, it
    // has no entries.
    realpath.native(resolve(path), (failure, folder) => {
      if (failure) return callback(failure, [])
      if (!within(request.root, folder)) return callback(null, [])
      readdir(folder, { withFileTypes: true }, (error, entries) => {
        if (error) return callback(error, [])
        rules.filter(folder, entries).then((kept) => callback(null, kept), (reason: unknown) => callback(reason as NodeJS.ErrnoException, []))
      })
    })
  }
  const options: GlobOptions = {
    cwd: request.start,
    absolute: true,
    dot: true,
    followSymbolicLinks: false,
    onlyFiles: true,
    // No extended globs: `@(+(a)|+(a))` nests repeats with no `*` for `starsOf` to count, and its
    // match backtracks for minutes on the event loop.
    extglob: false,
    // tinyglobby types `readdir` as all of fs.readdir's overloads; it only ever calls the withFileTypes one.
    fs: { readdir: filtered as unknown as NonNullable<GlobOptions['fs']>['readdir'] },
    ...(request.signal ? { signal: request.signal } : {}),
  }
  // Loaded by the first walk, not at import: tinyglobby with fdir and picomatch cost a start about 25 ms.
  const { glob } = await import('tinyglobby')
  const files = await glob(request.patterns.map(literalParentheses), options)
  request.signal?.throwIfAborted()
  return files.sort(byCodeUnit)
}

/** Parentheses as themselves (`*(1).jpg` finds `photo (1).jpg`): left bare, the glob library reads them as a regular expression's group. */
function literalParentheses(pattern: string): string {
  return pattern.replace(/\\.|[()]/g, (found) => (found.length === 2 ? found : `\\${found}`))
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The most `*` one part of a pattern (between slashes; `**` alone is no star of a part) may hold.
 * Names are matched by regular expressions that backtrack: with k stars a failing match costs about
 * the name's length to the power k, on the event loop, where no cancel reaches it. Measured against
 * one name: three stars 14 ms at 250 characters; four 1 s; five 42 s; six 10 s at 100 characters.
 */
const MOST_STARS = 3

/**
 * The stars one name is matched against in a part: those outside braces, plus, for each brace
 * group, the most of any one alternative (`{*.ts,*.tsx,*.js}` is one star per name, not three).
 * `\\*` is no star; nested braces count with their group.
 */
function starsOf(part: string): number {
  let total = 0
  let depth = 0
  let alternative = 0
  let most = 0
  for (const char of part.replace(/\\./g, '')) {
    if (char === '{') {
      if (depth++ === 0) alternative = most = 0
    } else if (char === '}' && depth > 0) {
      if (--depth === 0) total += Math.max(most, alternative)
    } else if (char === ',' && depth === 1) {
      most = Math.max(most, alternative)
      alternative = 0
    } else if (char === '*') {
      if (depth > 0) alternative++
      else total++
    }
  }
  // An unclosed brace is matched as text by the glob library: its stars count as written.
  return depth > 0 ? total + Math.max(most, alternative) : total
}

/**
 * An absolute pattern under the folder it is matched in, made relative to that folder: read and
 * write take absolute paths inside the workspace, so models write patterns so too. One elsewhere in
 * the workspace is refused with what to do; one outside it is left for `checkPattern` to refuse.
 */
export function relativeToFolder(pattern: string, folder: Resolved, scope: Scope, argument: string): string {
  if (!pattern.startsWith('/')) return pattern
  for (const base of [folder.absolute, folder.real]) {
    const rest = below(base, pattern)
    if (rest !== undefined && rest !== '') return rest
  }
  if (below(scope.root, pattern) !== undefined || below(scope.rootReal, pattern) !== undefined) {
    throw fsError('INVALID_PATTERN', `${argument} ${JSON.stringify(pattern)} is not under ${folder.display}, the folder it is matched in; give path a folder that holds it, or write the pattern relative to path`, { pattern })
  }
  return pattern
}

/** What follows `base/` in `path`, compared as text (the glob's magic characters are not looked at); undefined when it does not start so. */
function below(base: string, path: string): string | undefined {
  const prefix = base.endsWith('/') ? base : `${base}/`
  return path.startsWith(prefix) ? path.slice(prefix.length) : undefined
}

/**
 * Refuses a pattern that could name something outside the folder it is matched in (an absolute
 * pattern, or one with a `..` segment), and one too costly to match (`MOST_STARS`). Given the
 * pattern `relativeToFolder` made: an absolute one inside the folder is relative by then.
 */
export function checkPattern(pattern: string, argument: string): void {
  if (pattern.includes('\0')) throw fsError('INVALID_PATTERN', `${argument} contains a NUL byte`)
  if (pattern.split('/').some((part) => part !== '**' && starsOf(part) > MOST_STARS)) {
    throw fsError('INVALID_PATTERN', `${argument} ${JSON.stringify(pattern)} has more than ${MOST_STARS} * in one part; matching that against long names can take minutes. Use at most three * between two slashes, and narrow the rest with path or a second search`, { pattern })
  }
  // An absolute pattern inside the workspace was made relative already (`relativeToFolder`).
  if (pattern.startsWith('/')) {
    throw fsError('PATH_OUTSIDE_WORKSPACE', `${argument} ${JSON.stringify(pattern)} is an absolute path outside the folder it is matched in; write it relative to path`, { pattern })
  }
  if (pattern.split(/[/{},]/).includes('..')) {
    throw fsError('PATH_OUTSIDE_WORKSPACE', `${argument} ${JSON.stringify(pattern)} reaches outside the folder it is matched in; write it relative to path, without ".."`, { pattern })
  }
}
