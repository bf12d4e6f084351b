/** An agent's `tools` allow-list as a predicate: names or globs; absent or `*` = every tool (no predicate). */

import picomatch from 'picomatch'

export function visibleTools(patterns: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  if (patterns === undefined || patterns.includes('*')) return undefined
  if (patterns.length === 0) return () => false
  return picomatch([...patterns])
}

/** A child's allow-list may only narrow its parent's: a tool must pass both. */
export function narrowed(parent: ((name: string) => boolean) | undefined, child: ((name: string) => boolean) | undefined): ((name: string) => boolean) | undefined {
  if (!parent) return child
  if (!child) return parent
  return (name) => parent(name) && child(name)
}
