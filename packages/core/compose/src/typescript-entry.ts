/**
 * Imports a row's plugin. An entry that is TypeScript source fails in a Node that cannot run it
 * (the built `rein` on Node 20, or any package under node_modules on a Node that strips types);
 * that failure becomes `PLUGIN_NOT_BUILT`, saying how to build the package, not Node's bare error.
 */

import { fileURLToPath } from 'node:url'
import { ReinError } from '@rein/base'

const TYPESCRIPT = /\.[mc]?ts$/
/** What Node throws for a `.ts` file it will not run: unknown extension (Node 20), no stripping in node_modules, or syntax stripping cannot handle. */
const CANNOT_RUN = new Set(['ERR_UNKNOWN_FILE_EXTENSION', 'ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING', 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'])

export async function importPlugin(name: string, url: string): Promise<unknown> {
  try {
    return (await import(url)) as unknown
  } catch (error) {
    throw notBuilt(name, url, error) ?? error
  }
}

function notBuilt(name: string, url: string, error: unknown): ReinError | undefined {
  const path = url.startsWith('file:') ? fileURLToPath(url) : url
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined
  if (!TYPESCRIPT.test(path) || typeof code !== 'string' || !CANNOT_RUN.has(code)) return undefined
  const local = name.startsWith('.') || name.startsWith('/')
  const message = local
    ? `${path} is TypeScript, which Node cannot run here: compile it to JavaScript (tsc) and name the .js file in the row`
    : `the package ${name} ships TypeScript source (${path}), which Node cannot run: build it (npm run build, tsc or tsdown) and point "exports" (or "main") in its package.json at the built .js file`
  return new ReinError('PLUGIN_NOT_BUILT', message, { cause: error, details: { name, path } })
}
