/** `loadComposition`: boots a cordis.yml read-only and fails loudly, naming the row and the field. */

import { stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import Loader, { Group } from '@deepseek-ai/cordis-plugin-loader'
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
   * how a caller can say so. A reload takes its own (`ReloadOptions`). It runs from a timer, so it must not throw.
   */
  onSlow?: (slow: SlowLoad) => void
  /** How long the load runs before `onSlow` is called, in ms. Default 10 000. */
  slowAfterMs?: number
}

/**
 * How a reload says it is slow and learns it stalled, as the load does (`CompositionOptions`): a
 * row an edit adds or changes may never finish starting either.
 */
export type ReloadOptions = Pick<CompositionOptions, 'stalled' | 'onSlow' | 'slowAfterMs'>

/** A file's inode, size and modification time: a save changes at least one of them. */
export interface FileVersion {
  ino: number
  size: number
  mtimeMs: number
}

/** `Composition.dispose`'s options: `stalled` gives up on rows that never stop (or never finished starting). */
export type DisposeOptions = Pick<CompositionOptions, 'stalled'>

/** A loaded composition: its context, and the functions that reload and dispose it. */
export interface Composition {
  /** The root context: `composition.ctx.tools`, `.llm`, … */
  readonly ctx: Context
  /** The composition file, as an absolute path. */
  readonly file: string
  /**
   * Re-reads the file and applies what changed: added rows start, removed rows are disposed; says
   * which rows it added, removed and changed. An invalid edit rejects with `CONFIG_INVALID` and
   * leaves the rows running as they were. A reload told it stalled rejects naming the rows still
   * starting; those cannot be stopped, so every later reload is refused.
   */
  readonly reload: (options?: ReloadOptions) => Promise<ReloadReport>
  /**
   * The file as the rows running were last read from it (taken just before the read); undefined
   * for rows built in code. A save since shows as another version: a watch that starts after the
   * load (as `rein chat`'s does) compares it to catch a save it was not there to see.
   */
  readonly version: () => FileVersion | undefined
  /** Every row (group members too) with the config it runs with; see `CompositionRow`. */
  readonly rows: () => CompositionRow[]
  /**
   * Disposes every row; told it stalled, it stops waiting for a row that never stops (and any later
   * call returns at once). Safe to destructure: no function here uses `this`.
   */
  readonly dispose: (options?: DisposeOptions) => Promise<void>
}

/**
 * Throws `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` listing each problem as `row "<id>" (<name>): …`
 * (`PLUGIN_NOT_BUILT` when a row's package is TypeScript source Node cannot run). Config problems
 * are found before any row starts; on any failure nothing stays loaded. The file is never written.
 */
export async function loadComposition(options: CompositionOptions): Promise<Composition> {
  const file = resolve(options.file)
  const resolveFrom = [options.resolveFrom ?? dirname(file)].flat().map((folder) => resolve(folder))
  let version = options.rows ? undefined : await versionOf(file)
  const rows = options.rows ? checkRows([...options.rows], file) : await readConfigFile(file)
  const ctx = options.context ?? new Context()
  if (!ctx.get('loader')) await ctx.plugin(Loader)
  // A group row's plugin, by a name no package has to provide (cordis's loader ships none).
  ctx.loader.builtins.group ??= Group

  let tree!: ConfigTree
  const fiber = await ctx.plugin({
    name: 'rein-composition',
    inject: ['loader'],
    apply: (child: Context) => {
      tree = new ConfigTree(child, file, resolveFrom)
      child.effect(() => () => tree.root.stop(), `composition ${file}`)
    },
  })
  const steps = watchSteps(tree, rows, options)
  try {
    const checked = await steps.run('import', preflight(tree, rows))
    if (checked.problems.length > 0) throw invalid(file, checked.problems, checked.cause, checked.notBuilt ? 'PLUGIN_NOT_BUILT' : 'CONFIG_INVALID')
    const failed = await steps.run('start', applyRows(tree, rows))
    if (failed.length > 0) throw invalid(file, failed)
    const problems = await steps.run('check', checkLoaded(ctx))
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
    steps.done()
  }

  let running = rows
  /** What a reload told it stalled found still starting: no later reload can stop those rows, nor put the old ones back. */
  let stuck: string[] | undefined
  const reload = async (watching: ReloadOptions = {}): Promise<ReloadReport> => {
    if (stuck) throw invalid(file, stuck.map((problem) => `an earlier reload never finished: ${problem}; restart to apply an edit`))
    const seen = options.rows ? undefined : await versionOf(file)
    const next = options.rows ? rows : await readConfigFile(file)
    const ran = tree.forgetResolved()
    const steps = watchSteps(tree, next, watching)
    try {
      const checked = await steps.run('import', preflight(tree, next, running))
      if (checked.problems.length > 0) {
        tree.restoreResolved(ran)
        throw invalid(file, checked.problems, checked.cause, checked.notBuilt ? 'PLUGIN_NOT_BUILT' : 'CONFIG_INVALID')
      }
      const failed = await steps.run('start', applyRows(tree, next))
      if (failed.length === 0) failed.push(...await steps.run('check', checkLoaded(ctx)))
      if (failed.length === 0) {
        const report = diffRows(running, next)
        running = next
        version = seen
        return report
      }
      // Only starting shows these: put the rows that ran back, from the files they ran, so the
      // composition runs as before.
      tree.restoreResolved(ran)
      const restored = await steps.run('start', applyRows(tree, running))
      throw invalid(file, [...failed, ...restored.map((problem) => `after putting the previous rows back: ${problem}`)])
    } catch (error) {
      if (!isStalled(error)) throw error
      stuck = await stalledProblems(tree, next)
      throw invalid(file, stuck)
    } finally {
      steps.done()
    }
  }
  let disposing: Promise<unknown> | undefined
  let abandoned = false
  const dispose = async ({ stalled }: DisposeOptions = {}) => {
    if (abandoned) return
    disposing ??= fiber.dispose()
    try {
      await untilStalled(disposing, stalled)
    } catch (error) {
      if (!isStalled(error)) throw error
      // A row that never stops (or never finished starting) is left as it is: nothing can end it.
      abandoned = true
    }
  }
  // Reloads run one at a time: each compares against, and may restore, what the previous one left.
  let queue: Promise<unknown> = Promise.resolve()
  return {
    ctx,
    file,
    reload: (watching?: ReloadOptions) => {
      const result = queue.then(() => reload(watching))
      queue = result.catch(() => undefined)
      return result
    },
    version: () => version,
    rows: () => describeRows(tree, running),
    dispose,
  }
}

/**
 * A load's or a reload's steps: each given up on once `stalled` aborts, and `onSlow` told once,
 * `slowAfterMs` after the start, which step it is at and what that step waits for.
 */
function watchSteps(tree: ConfigTree, rows: readonly EntryOptions[], { stalled, onSlow, slowAfterMs }: ReloadOptions) {
  let at: SlowLoad['step'] = 'import'
  // Unref'd: a load that stalls must still let the event loop run empty, which is how `stalled`
  // is seen (and an exit is never held up by it).
  const slow = onSlow && setTimeout(() => onSlow(slowLoad(tree, rows, at)), slowAfterMs ?? SLOW_AFTER_MS).unref()
  return {
    run: <T>(step: SlowLoad['step'], work: Promise<T>): Promise<T> => {
      at = step
      return untilStalled(work, stalled)
    },
    done: () => clearTimeout(slow),
  }
}

/** The file's version before it is read; undefined when it cannot be stat'ed (its read then says why). */
async function versionOf(file: string): Promise<FileVersion | undefined> {
  try {
    const { ino, size, mtimeMs } = await stat(file)
    return { ino, size, mtimeMs }
  } catch {
    return undefined
  }
}
