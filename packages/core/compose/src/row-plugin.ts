/**
 * What compose reads from a row's plugin before and after it starts: its `Config`, the services it
 * injects and the ones it provides. Plugins are imported through the tree, exactly as it will.
 */

import { Inject } from '@deepseek-ai/cordis'
import type { EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { isReinError } from '@rein/base'
import { missingPackageHint } from './rein-packages.ts'

export interface RowPlugin {
  Config: unknown
  /** Services the row waits for: the plugin's `inject` plus the row's own `inject`. */
  inject: string[]
  /** The plugin's `provide` field (cordis reads it as a Service's default name). */
  provide: string[]
}

/**
 * `notBuilt`: the entry is TypeScript source this Node cannot run (the problem says how to build it).
 * `cause`: the import's own error, when the import failed.
 */
export type LoadedPlugin = { ok: true; plugin: RowPlugin } | { ok: false; problem: string; notBuilt: boolean; cause?: unknown }

/** `row "<id>" (<plugin>)`, the way every problem names its row. */
export function rowLabel(row: Pick<EntryOptions, 'id' | 'name'>): string {
  return `row "${row.id}" (${row.name})`
}

export async function loadPlugin(tree: EntryTree, row: EntryOptions): Promise<LoadedPlugin> {
  let exports: unknown
  try {
    exports = await tree.import(row.name)
  } catch (error) {
    if (isReinError(error, 'PLUGIN_NOT_BUILT')) return { ok: false, problem: error.message, notBuilt: true, cause: error.cause }
    return { ok: false, problem: `cannot load the plugin: ${firstLine(error)}${installHint(error, row.name)}`, notBuilt: false, cause: error }
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
    },
  }
}

/** For the row's own package missing (not one of its dependencies): how to install it. */
function installHint(error: unknown, name: string): string {
  const missing = error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && firstLine(error).startsWith(`Cannot find package '${name}'`)
  return missing ? `; ${missingPackageHint(name)}` : ''
}

export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n', 1)[0] ?? message
}
