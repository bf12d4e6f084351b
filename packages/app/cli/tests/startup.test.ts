/** `rein --help` must not load the stack: only what parsing and help need is imported statically (issue #8). */

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACKAGE_DIR } from './harness.ts'

/** Packages reached from `file` through static, non-type imports (dynamic `import()` is not followed). */
function staticPackages(file: string, seen = new Set<string>(), packages = new Set<string>()): Set<string> {
  if (seen.has(file)) return packages
  seen.add(file)
  const source = readFileSync(file, 'utf8')
  for (const [, specifier] of source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'"]*?from\s+)?'([^']+)'/gm)) {
    if (specifier!.startsWith('.')) staticPackages(join(dirname(file), specifier!), seen, packages)
    else packages.add(specifier!)
  }
  return packages
}

describe('startup', () => {
  it('loads no command, no composition and no provider before a command runs', () => {
    const reached = [...staticPackages(join(PACKAGE_DIR, 'src', 'bin.ts'))].sort()
    // node:fs and node:tty: what a terminal that hangs up needs at exit (terminal-gone.ts), both Node's own.
    expect(reached).toEqual(['@rein/base', 'node:fs', 'node:tty', 'node:util'])
  })
})
