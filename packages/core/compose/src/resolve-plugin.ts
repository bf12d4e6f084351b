/**
 * Resolves a row's plugin name the way Node would from the composition's own folder, so the
 * packages a user installed beside their cordis.yml load — not whatever the loader can see.
 */

import { pathToFileURL } from 'node:url'
import { basename, join } from 'node:path'
import { moduleResolve } from 'import-meta-resolve'

/**
 * `./x.ts` resolves against the folder of `file` (the composition); a package name against the
 * `node_modules` of each folder of `resolveFrom` in turn: the first that has the package wins. When
 * none has it, the first folder's error is thrown; a package that is there but broken (bad
 * `exports`) fails at once.
 */
export function resolvePlugin(name: string, file: string, resolveFrom: readonly string[]): string {
  const parent = pathToFileURL(file)
  if (name.startsWith('.') || name.startsWith('/')) return new URL(name, parent).href
  let first: unknown
  for (const folder of resolveFrom) {
    try {
      // Named as the composition file in that folder: Node's error says "imported from" it.
      return moduleResolve(name, pathToFileURL(join(folder, basename(file))), conditions()).href
    } catch (error) {
      if (!isNotFound(error)) throw error
      first ??= error
    }
  }
  throw first ?? new Error(`Cannot find package '${name}': no folder to resolve it from`)
}

function isNotFound(error: unknown): boolean {
  return error instanceof Error && Reflect.get(error, 'code') === 'ERR_MODULE_NOT_FOUND'
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
