/** `loadComposition`: boots a cordis.yml read-only and fails loudly, naming the row and the field. */

import { dirname, resolve } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { applyRows } from './apply-rows.ts'
import { ConfigTree } from './config-tree.ts'
import { preflight } from './preflight.ts'
import { checkRows, invalid, readConfigFile } from './read-config.ts'

/** What `loadComposition` loads: a file (or rows built in code) and where their plugins resolve from. */
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

/** A loaded composition: its context, and the functions that reload and dispose it. */
export interface Composition {
  /** The root context: `composition.ctx.tools`, `.llm`, … */
  readonly ctx: Context
  /** The composition file, as an absolute path. */
  readonly file: string
  /**
   * Re-reads the file and applies what changed: added rows start, removed rows are disposed. An
   * invalid edit rejects with `CONFIG_INVALID` and leaves the rows running as they were.
   */
  readonly reload: () => Promise<void>
  /** Disposes every row. Safe to destructure: neither function uses `this`. */
  readonly dispose: () => Promise<void>
}

/**
 * Throws `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` listing each problem as `row "<id>" (<name>): …`.
 * Config problems are found before any row starts; on any failure nothing stays loaded. The file
 * is never written.
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
    apply: (child: Context) => {
      tree = new ConfigTree(child, file, resolveFrom)
      child.effect(() => () => tree.root.stop(), `composition ${file}`)
    },
  })
  try {
    const problems = await preflight(tree, rows)
    if (problems.length > 0) throw invalid(file, problems)
    const failed = await applyRows(tree, rows)
    if (failed.length > 0) throw invalid(file, failed)
  } catch (error) {
    await fiber.dispose()
    throw error
  }

  let running = rows
  const reload = async () => {
    const next = options.rows ? rows : await readConfigFile(file)
    const problems = await preflight(tree, next)
    if (problems.length > 0) throw invalid(file, problems)
    const failed = await applyRows(tree, next)
    if (failed.length === 0) {
      running = next
      return
    }
    // Only starting shows these: put the rows that ran back, so the composition runs as before.
    const restored = await applyRows(tree, running)
    throw invalid(file, [...failed, ...restored.map((problem) => `after putting the previous rows back: ${problem}`)])
  }
  // Reloads run one at a time: each compares against, and may restore, what the previous one left.
  let queue: Promise<unknown> = Promise.resolve()
  return {
    ctx,
    file,
    reload: () => {
      const result = queue.then(reload)
      queue = result.catch(() => undefined)
      return result
    },
    dispose: async () => {
      await fiber.dispose()
    },
  }
}
