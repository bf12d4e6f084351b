/**
 * Which paths a snapshot skips: the configured list (gitignore syntax, applied at the workspace
 * root) and every `.gitignore` from the root down, as git applies them — a folder's rules apply
 * below it and a deeper file overrides a shallower one. `.git` is never entered, and a `.gitignore`
 * file always kept, whatever the rules say.
 */

import { lstatSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Ignore } from 'ignore'
import type ignoreFactory from 'ignore'

/**
 * `ignore`, required by the first snapshot's rules: imported as an ES module it cost every start
 * about 15 ms (Node scans its CommonJS source for export names); required, about 4.
 */
let loaded: typeof ignoreFactory | undefined
function ignore(): Ignore {
  loaded ??= createRequire(import.meta.url)('ignore') as typeof ignoreFactory
  return loaded()
}

/** The rules of one root, kept across walks; a `.gitignore` is read again when its stat changes. */
export class IgnoreRules {
  /** Each folder's own rules, by path relative to the root (`''` is the root); `null`: none. */
  private readonly folders = new Map<string, { signature: string; rules: Ignore | null }>()
  private readonly listed: Ignore

  constructor(private readonly root: string, list: readonly string[]) {
    this.listed = ignore().add([...list])
  }

  /**
   * Reads `folder`'s `.gitignore` (when `hasGitignore`) unless it is unchanged since the last walk.
   * Call once per folder, before `ignored` asks about its entries. Returns whether the folder's
   * rules are new or changed: then earlier verdicts below it no longer hold.
   */
  enter(folder: string, hasGitignore: boolean): boolean {
    const file = join(this.root, folder, '.gitignore')
    const signature = hasGitignore ? signatureOf(file) : 'none'
    const known = this.folders.get(folder)
    if (known && known.signature === signature) return false
    let rules: Ignore | null = null
    if (hasGitignore) {
      let text: string | undefined
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        // An unreadable .gitignore ignores nothing.
      }
      if (text !== undefined) rules = ignore().add(text)
    }
    this.folders.set(folder, { signature, rules })
    return true
  }

  /** Whether the entry `name` of `folder` (relative to the root) is skipped. */
  ignored(folder: string, name: string, isDirectory: boolean): boolean {
    if (name === '.git') return true
    // The rules themselves are always kept: a command that writes one is undone with the rest, so
    // what it hid is seen again once it is gone.
    if (name === '.gitignore' && !isDirectory) return false
    const path = folder === '' ? name : `${folder}/${name}`
    const suffix = isDirectory ? '/' : ''
    if (check(this.listed, path + suffix).ignored) return true
    // Deepest rules first; the first file with an opinion decides.
    for (let current = folder; ; current = parent(current)) {
      const rules = this.folders.get(current)?.rules
      if (rules) {
        const verdict = check(rules, (current === '' ? path : path.slice(current.length + 1)) + suffix)
        if (verdict.ignored) return true
        if (verdict.unignored) return false
      }
      if (current === '') return false
    }
  }
}

function signatureOf(file: string): string {
  try {
    const stats = lstatSync(file)
    return `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}`
  } catch {
    return 'unreadable'
  }
}

function parent(folder: string): string {
  const cut = folder.lastIndexOf('/')
  return cut < 0 ? '' : folder.slice(0, cut)
}

function check(rules: Ignore, path: string): { ignored: boolean; unignored: boolean } {
  try {
    return rules.test(path)
  } catch {
    // `ignore` refuses some names (ones it cannot express relatively); such a name is kept.
    return { ignored: false, unignored: false }
  }
}
