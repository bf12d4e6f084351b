/**
 * What compose reads from a row's plugin before and after it starts: its `Config`, the services it
 * injects and the ones it provides. Plugins are imported through the tree, exactly as it will.
 */

import { statSync, type Stats } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Inject } from '@deepseek-ai/cordis'
import type { EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { isReinError } from '@rein/base'
import { missingPackageHint, packageOf } from './rein-packages.ts'

export interface RowPlugin {
  Config: unknown
  /** Services the row waits for: the plugin's `inject` plus the row's own `inject`. */
  inject: string[]
  /** The plugin's `provide` field (cordis reads it as a Service's default name). */
  provide: string[]
  /** Whether it is a group plugin (cordis's `Group`), which starts the rows in its config. */
  group: boolean
}

/** What marks a group plugin (`EntryGroup.key` in cordis's loader). */
const GROUP = Symbol.for('cordis.group')

/**
 * `notBuilt`: the entry is TypeScript source this Node cannot run (the problem says how to build it).
 * `cause`: the import's own error, when the import failed.
 */
export type LoadedPlugin = { ok: true; plugin: RowPlugin } | { ok: false; problem: string; notBuilt: boolean; cause?: unknown }

/** `row "<id>" (<plugin>)`, the way every problem names its row. */
export function rowLabel(row: Pick<EntryOptions, 'id' | 'name'>): string {
  return `row "${row.id}" (${row.name})`
}

/** `file`: the composition, which a `./path` row is relative to. */
export async function loadPlugin(tree: EntryTree & { readonly file: string }, row: EntryOptions): Promise<LoadedPlugin> {
  let exports: unknown
  try {
    exports = await tree.import(row.name)
  } catch (error) {
    if (isReinError(error, 'PLUGIN_NOT_BUILT')) return { ok: false, problem: error.message, notBuilt: true, cause: error.cause }
    const problem = localFileProblem(error, row.name, tree.file) ?? `${firstLine(error)}${installHint(error, row.name)}`
    return { ok: false, problem: `cannot load the plugin: ${problem}`, notBuilt: false, cause: error }
  }
  const plugin: unknown = tree.ctx.loader.unwrapExports(exports)
  const isPlugin = typeof plugin === 'function' || (typeof plugin === 'object' && plugin !== null && typeof Reflect.get(plugin, 'apply') === 'function')
  if (!isPlugin) return { ok: false, problem: 'the module is not a cordis plugin (export a function, a class, or an object with apply)', notBuilt: false }
  // cordis normalizes whatever `inject` shape it accepts (a list, or a map of names) with this.
  const inject = (value: unknown) => Object.keys(Inject.resolve(value as Inject | undefined))
  const provide: unknown = Reflect.get(plugin, 'provide')
  return {
    ok: true,
    plugin: {
      Config: Reflect.get(plugin, 'Config'),
      inject: [...new Set([...inject(Reflect.get(plugin, 'inject')), ...inject(row.inject)])],
      provide: typeof provide === 'string' ? [provide] : Array.isArray(provide) ? provide.filter((name) => typeof name === 'string') : [],
      group: Reflect.get(plugin, GROUP) === true,
    },
  }
}

/**
 * A `./path` row whose own path is missing or is a folder: Node's error names the module that
 * imported it (compose, not the composition) and says nothing of what to do.
 */
function localFileProblem(error: unknown, name: string, file: string): string | undefined {
  if (!(name.startsWith('.') || name.startsWith('/'))) return undefined
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined
  const path = fileURLToPath(new URL(name, pathToFileURL(file)))
  const kind = statOrNothing(path)
  if (code === 'ERR_MODULE_NOT_FOUND' && kind === undefined) {
    const relative = name.startsWith('.') ? `; the path is relative to the folder of ${file}` : ''
    return `${path} does not exist${relative}: check it, or build the file first`
  }
  // Node says ERR_UNSUPPORTED_DIR_IMPORT; a loader hook (vite's, tsx's) may say not found.
  if ((code === 'ERR_UNSUPPORTED_DIR_IMPORT' || code === 'ERR_MODULE_NOT_FOUND') && kind?.isDirectory() === true) {
    return `${path} is a folder, which Node does not import: name the file the package runs (its package.json's exports or main, e.g. ${name.replace(/\/$/, '')}/dist/index.mjs), or install the package beside the file (npm install ${name}) and name it by its package name`
  }
  return undefined
}

/** What stands at `path`, or undefined when nothing can be seen there (missing, through a file, not permitted): Node's words then stand. */
function statOrNothing(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/** For the row's own package missing (not one of its dependencies): how to install it. */
function installHint(error: unknown, name: string): string {
  const missing = error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && firstLine(error).startsWith(`Cannot find package '${packageOf(name)}'`)
  return missing ? `; ${missingPackageHint(name)}` : ''
}

export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n', 1)[0] ?? message
}
