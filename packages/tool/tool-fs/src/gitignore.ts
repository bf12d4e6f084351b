/**
 * `.gitignore` rules as git applies them within the workspace: each file's rules apply below its
 * folder, a deeper file overrides a shallower one, and the `.git` folder is always skipped.
 */

import type { Dirent } from 'node:fs'
import { open } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import type { Ignore } from 'ignore'
import type ignoreFactory from 'ignore'
import { READ_FLAGS } from './open-file.ts'
import { within } from './workspace.ts'

export class GitignoreRules {
  /** Each folder's own rules; `null` when it has no `.gitignore`. */
  private readonly folders = new Map<string, Ignore | null>()

  /** `root`: the workspace's real root; no rules above it are read. `enabled: false` only skips `.git`. */
  constructor(private readonly root: string, private enabled: boolean) {}

  /**
   * Loads the rules of every folder from the root down to `start`. When `start` itself is ignored
   * the model asked for it by name, so this walk applies no rules (but still skips `.git`).
   */
  async prime(start: string): Promise<void> {
    if (!this.enabled) return
    // Here, where a failure fails the walk: inside the walk fdir would drop the folder silently.
    loadIgnore()
    const chain: string[] = []
    for (let folder = start; within(this.root, folder); folder = dirname(folder)) {
      chain.unshift(folder)
      if (folder === this.root) break
    }
    for (const folder of chain) await this.load(folder)
    if (start !== this.root && this.ignored(dirname(start), relative(dirname(start), start), true)) this.enabled = false
  }

  /** The entries of `folder` a walk should see: no `.git`, nothing ignored. Loads the folder's own rules first. */
  async filter(folder: string, entries: Dirent[]): Promise<Dirent[]> {
    const kept = entries.filter((entry) => entry.name !== '.git')
    if (!this.enabled) return kept
    if (!this.folders.has(folder)) {
      await this.load(folder, kept.some((entry) => entry.name === '.gitignore' && !entry.isDirectory()))
    }
    return kept.filter((entry) => !this.ignored(folder, entry.name, entry.isDirectory()))
  }

  private async load(folder: string, present = true): Promise<void> {
    if (this.folders.has(folder)) return
    let rules: Ignore | null = null
    if (present) {
      const text = await readRules(join(folder, '.gitignore')).catch(() => undefined)
      if (text !== undefined) rules = loadIgnore()().add(text)
    }
    this.folders.set(folder, rules)
  }

  /** Deepest rules first; the first file with an opinion on the path decides. */
  private ignored(folder: string, name: string, isDirectory: boolean): boolean {
    const path = join(folder, name)
    for (let current = folder; within(this.root, current); current = dirname(current)) {
      const rules = this.folders.get(current)
      if (rules) {
        const verdict = test(rules, relative(current, path) + (isDirectory ? '/' : ''))
        if (verdict.ignored) return true
        if (verdict.unignored) return false
      }
      if (current === this.root) break
    }
    return false
  }
}

/** The most of one `.gitignore` read: rules past it are not applied. */
const MAX_RULES_BYTES = 1024 * 1024

/**
 * A `.gitignore`'s text, as git would read it: never through a link (rules from outside the
 * workspace), never a FIFO or device (a read that blocks for good holds one of libuv's few file
 * threads), at most `MAX_RULES_BYTES`. Undefined for anything but a regular file.
 */
async function readRules(path: string): Promise<string | undefined> {
  const handle = await open(path, READ_FLAGS)
  try {
    const stat = await handle.stat()
    if (!stat.isFile()) return undefined
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_RULES_BYTES))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    return buffer.toString('utf8', 0, bytesRead)
  } finally {
    await handle.close()
  }
}

function test(rules: Ignore, path: string): { ignored: boolean; unignored: boolean } {
  try {
    return rules.test(path)
  } catch {
    // `ignore` refuses some names (e.g. ones it cannot express relatively); such a name is kept.
    return { ignored: false, unignored: false }
  }
}

/**
 * `ignore`, loaded by the first walk that applies `.gitignore` rules: imported as an ES module it
 * cost every start about 15 ms (Node scans its CommonJS source for export names); required, about 4.
 */
let ignore: typeof ignoreFactory | undefined
function loadIgnore(): typeof ignoreFactory {
  ignore ??= createRequire(import.meta.url)('ignore') as typeof ignoreFactory
  return ignore
}
