/**
 * An agent's `tools` allow-list as a predicate: names or globs, and `!pattern` to take tools back
 * out. Absent or containing `*` with no exclusions = every tool (no predicate at all); `[]` = none.
 */

import { createRequire } from 'node:module'
import type Picomatch from 'picomatch'
import { ReinError } from '@rein/base'

/**
 * picomatch, loaded by the first allow-list: most agents have none, and loading it (four CommonJS
 * files) cost every `rein run` 12–18 ms before its first request.
 */
let picomatch: typeof Picomatch | undefined
function matcher(patterns: string[]): (name: string) => boolean {
  picomatch ??= createRequire(import.meta.url)('picomatch') as typeof Picomatch
  return picomatch(patterns)
}

export function visibleTools(patterns: unknown): ((name: string) => boolean) | undefined {
  if (patterns === undefined) return undefined
  if (!Array.isArray(patterns) || patterns.some((pattern) => typeof pattern !== 'string' || pattern === '' || pattern === '!')) {
    throw new ReinError('INVALID_TOOLS', 'tools must be a list of tool names or globs, e.g. ["read", "fs_*", "!fs_write"]; [] allows none')
  }
  const include = (patterns as string[]).filter((pattern) => !pattern.startsWith('!'))
  const exclude = (patterns as string[]).filter((pattern) => pattern.startsWith('!')).map((pattern) => pattern.slice(1))
  if (exclude.length === 0 && include.includes('*')) return undefined
  // `[]` allows none; only exclusions (`["!write"]`): everything else stays visible.
  if (include.length === 0 && exclude.length === 0) return () => false
  const included = include.length > 0 ? matcher(include) : () => true
  const excluded = exclude.length > 0 ? matcher(exclude) : () => false
  return (name) => included(name) && !excluded(name)
}

/** A child's allow-list may only narrow its parent's: a tool must pass both. */
export function narrowed(parent: ((name: string) => boolean) | undefined, child: ((name: string) => boolean) | undefined): ((name: string) => boolean) | undefined {
  if (!parent) return child
  if (!child) return parent
  return (name) => parent(name) && child(name)
}
