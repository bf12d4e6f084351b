/** `loadComposition`: boots a cordis.yml read-only and fails loudly, naming the row and the field. */

import { dirname, resolve } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import { ConfigTree } from './config-tree.ts'
import { diagnose } from './diagnose.ts'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { checkRows, invalid, readConfigFile } from './read-config.ts'

export interface CompositionOptions {
  /**
   * A `cordis.yml` (or `.yaml`, `.json`): a list of `{id, name, config?, disabled?, …}` rows. With
   * `rows`, it only names the composition in messages and anchors relative plugin paths.
   */
  file: string
  /** Rows to load instead of reading `file` (a composition built in code). */
  rows?: readonly EntryOptions[]
  /** Folder whose `node_modules` plugin names resolve from. Default: the file's folder. */
  resolveFrom?: string
  /** Root context to load into. Default: a new one. */
  context?: Context
}

export interface Composition {
  /** The root context: `composition.ctx.tools`, `.llm`, … */
  readonly ctx: Context
  readonly file: string
  /** Re-reads the file and applies what changed: added rows start, removed rows are disposed. */
  readonly reload: () => Promise<void>
  /** Disposes every row. Safe to destructure: neither function uses `this`. */
  readonly dispose: () => Promise<void>
}

/**
 * Throws `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` listing each problem as `row "<id>" (<name>): …`.
 * On failure nothing stays loaded. The file is never written.
 */
export async function loadComposition(options: CompositionOptions): Promise<Composition> {
  const file = resolve(options.file)
  const resolveFrom = resolve(options.resolveFrom ?? dirname(file))
  const rows = options.rows ? checkRows([...options.rows], file) : await readConfigFile(file)
  const ctx = options.context ?? new Context()
  if (!ctx.get('loader')) await ctx.plugin(Loader)

  let tree!: ConfigTree
  const fiber = await ctx.plugin({
    name: 'rein-composition',
    inject: ['loader'],
    apply: async (child: Context) => {
      tree = new ConfigTree(child, file, resolveFrom)
      child.effect(() => () => tree.root.stop(), `composition ${file}`)
      await tree.root.update(rows)
    },
  })
  const check = async () => {
    await ctx.loader.await()
    const problems = await diagnose(tree)
    if (problems.length > 0) throw invalid(file, problems)
  }
  try {
    await check()
  } catch (error) {
    await fiber.dispose()
    throw error
  }
  return {
    ctx,
    file,
    reload: async () => {
      const next = options.rows ? rows : await readConfigFile(file)
      await tree.root.update(next)
      await check()
    },
    dispose: async () => {
      await fiber.dispose()
    },
  }
}
