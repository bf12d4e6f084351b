/**
 * Resolves a row's plugin name the way Node would from the composition's own folder, so the
 * packages a user installed beside their cordis.yml load — not whatever the loader can see.
 */

import { pathToFileURL } from 'node:url'
import { join } from 'node:path'
import { moduleResolve } from 'import-meta-resolve'

/** `./x.ts` resolves against `fileDir`; a package name against `resolveFrom`'s node_modules. */
export function resolvePlugin(name: string, fileDir: string, resolveFrom: string): string {
  if (name.startsWith('.') || name.startsWith('/')) return new URL(name, pathToFileURL(join(fileDir, '/'))).href
  const parent = pathToFileURL(join(resolveFrom, 'cordis.yml'))
  return moduleResolve(name, parent, conditions()).href
}

let cached: Set<string> | undefined

/** Node's own resolution conditions plus any the process was started with (`--conditions`, `-C`). */
function conditions(): Set<string> {
  if (cached) return cached
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)]
  const custom: string[] = []
  args.forEach((arg, i) => {
    const inline = /^(?:--conditions|-C)=(.+)$/.exec(arg)
    if (inline) custom.push(inline[1]!)
    else if ((arg === '--conditions' || arg === '-C') && args[i + 1]) custom.push(args[i + 1]!)
  })
  cached = new Set(['node', 'import', ...custom])
  return cached
}
