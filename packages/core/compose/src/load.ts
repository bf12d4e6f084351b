/** `loadComposition`: boots a cordis.yml read-only and fails loudly, naming the row and the field. */

import { dirname, resolve } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { applyRows } from './apply-rows.ts'
import { checkLoaded } from './check.ts'
import { ConfigTree } from './config-tree.ts'
import { preflight } from './preflight.ts'
import { checkRows, invalid, readConfigFile } from './read-config.ts'
import { describeRows, diffRows, type CompositionRow, type ReloadReport } from './row-list.ts'
import { isStalled, slowLoad, stalledProblems, untilStalled, type SlowLoad } from './stalled.ts'

/** `CompositionOptions.slowAfterMs`'s default. */
const SLOW_AFTER_MS = 10_000

/** What `loadComposition` loads: a file (or rows built in code) and where their plugins resolve from. */
export interface CompositionOptions {
  /**
   * A `cordis.yml` (or `.yaml`, `.json`): a list of `{id, name, config?, disabled?, …}` rows. With
   * `rows`, it only names the composition in messages and anchors relative plugin paths.
   */
  file: string
  /** Rows to load instead of reading `file` (a composition built in code). */
  rows?: readonly EntryOptions[]
  /**
   * Folder whose `node_modules` plugin names resolve from, or folders tried in order (the first
   * that has the package wins). Default: the file's folder.
   */
  resolveFrom?: string | readonly string[]
  /** Root context to load into. Default: a new one. */
  context?: Context
  /**
   * Abort it when nothing else can happen in the process (Node's `beforeExit` while the load is
   * pending): a row still starting then never will, and the load rejects with `CONFIG_INVALID`
   * naming each one, rather than never settling. The rows already running are disposed; a row
   * still starting is left as it is (its apply never returns).
   */
  stalled?: AbortSignal
  /**
   * Called once when the load has not settled `slowAfterMs` after it began, with what it still
   * waits for; the load goes on waiting (a plugin may be connecting somewhere). A row whose apply
   * never settles while it keeps a timer or a socket open never lets `stalled` be seen: this is
   * how a caller can say so. Not at a reload. It runs from a timer, so it must not throw.
   */
  onSlow?: (slow: SlowLoad) => void
  /** How long the load runs before `onSlow` is called, in ms. Default 10 000. */
  slowAfterMs?: number
}

/** A loaded composition: its context, and the functions that reload and dispose it. */
export interface Composition {
  /** The root context: `composition.ctx.tools`, `.llm`, … */
  readonly ctx: Context
  /** The composition file, as an absolute path. */
  readonly file: string
  /**
   * Re-reads the file and applies what changed: added rows start, removed rows are disposed; says
   * which rows it added, removed and changed. An invalid edit rejects with `CONFIG_INVALID` and
   * leaves the rows running as they were.
   */
  readonly reload: () => Promise<ReloadReport>
  /** Every row (group members too) with the config it runs with; see `CompositionRow`. */
  readonly rows: () => CompositionRow[]
  /** Disposes every row. Safe to destructure: no function here uses `this`. */
  readonly dispose: () => Promise<void>
}

/**
 * Throws `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` listing each problem as `row "<id>" (<name>): …`
 * (`PLUGIN_NOT_BUILT` when a row's package is TypeScript source Node cannot run). Config problems
 * are found before any row starts; on any failure nothing stays loaded. The file is never written.
 */
export async function loadComposition(options: CompositionOptions): Promise<Composition> {
  const file = resolve(options.file)
  const resolveFrom = [options.resolveFrom ?? dirname(file)].flat().map((folder) => resolve(folder))
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
  const step = <T>(work: Promise<T>) => untilStalled(work, options.stalled)
  let at: SlowLoad['step'] = 'import'
  const { onSlow } = options
  // Unref'd: a load that stalls must still let the event loop run empty, which is how `stalled`
  // is seen (and an exit is never held up by it).
  const slow = onSlow && setTimeout(() => onSlow(slowLoad(tree, rows, at)), options.slowAfterMs ?? SLOW_AFTER_MS).unref()
  try {
    const checked = await step(preflight(tree, rows))
    if (checked.problems.length > 0) throw invalid(file, checked.problems, checked.cause, checked.notBuilt ? 'PLUGIN_NOT_BUILT' : 'CONFIG_INVALID')
    at = 'start'
    const failed = await step(applyRows(tree, rows))
    if (failed.length > 0) throw invalid(file, failed)
    at = 'check'
    const problems = await step(checkLoaded(ctx))
    if (problems.length > 0) throw invalid(file, problems)
  } catch (error) {
    if (!isStalled(error)) {
      await fiber.dispose()
      throw error
    }
    const problems = await stalledProblems(tree, rows)
    // Disposing waits for every row to stop, and a row still starting never will: not awaited.
    void fiber.dispose()
    throw invalid(file, problems)
  } finally {
    clearTimeout(slow)
  }

  let running = rows
  const reload = async (): Promise<ReloadReport> => {
    const next = options.rows ? rows : await readConfigFile(file)
    const ran = tree.forgetResolved()
    const checked = await preflight(tree, next, running)
    if (checked.problems.length > 0) {
      tree.restoreResolved(ran)
      throw invalid(file, checked.problems, checked.cause, checked.notBuilt ? 'PLUGIN_NOT_BUILT' : 'CONFIG_INVALID')
    }
    const failed = await applyRows(tree, next)
    if (failed.length === 0) failed.push(...await checkLoaded(ctx))
    if (failed.length === 0) {
      const report = diffRows(running, next)
      running = next
      return report
    }
    // Only starting shows these: put the rows that ran back, from the files they ran, so the
    // composition runs as before.
    tree.restoreResolved(ran)
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
    rows: () => describeRows(tree, running),
    dispose: async () => {
      await fiber.dispose()
    },
  }
}
