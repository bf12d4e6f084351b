/**
 * The loader entry tree behind a composition: the rows of one file, read-only. It never writes the
 * file back (cordis's include plugin does), and it imports plugins resolved from the composition's
 * folders (`resolveFrom`: by default the file's own).
 */

import { dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import { EntryTree, type Entry } from '@deepseek-ai/cordis-plugin-loader'
import { containsJsExpr, startConfigProblems } from './check-config.ts'
import { disabledThrew, evaluateConfig, expressionThrew, undefinedExpressions } from './evaluate-config.ts'
import { resolvePlugin } from './resolve-plugin.ts'
import { rowFailure, rowFailureProblems } from './row-failure.ts'
import { secretNameProblems } from './secret-in-names.ts'
import { importPlugin } from './typescript-entry.ts'

export class ConfigTree extends EntryTree {
  constructor(ctx: Context, readonly file: string, readonly resolveFrom: readonly string[]) {
    super(ctx)
    this.ctx.baseUrl = pathToFileURL(`${dirname(file)}/`).href
    holdRestarts(this)
    sayConfigFailures(this, this.childFailures)
    this.ctx.on('loader/entry-init', (entry) => this.keepStartFailure(entry))
  }

  /**
   * The file each plugin name was resolved to. A load imports each row's plugin three times (the
   * config check, the start, the report), and resolving walks node_modules each time. A name that
   * fails to resolve is not kept: the error path is rare and may be fixed by an install.
   */
  private resolved = new Map<string, string>()

  /** A composition file is the user's: nothing rein does at run time is written back to it. */
  write() {}

  /** Plugin names whose module is being imported now. */
  private importing = new Set<string>()

  /** Why each row that has no fiber never got one (see `keepStartFailure`). */
  private startFailures = new WeakMap<Entry, unknown>()

  /** The plugins each row's plugin started itself whose config was refused, with the problems (see `sayConfigFailures`). */
  private childFailures: ChildFailures = new WeakMap()

  /**
   * The problems of the plugins `entry`'s plugin started itself (`ctx.plugin`) that did not start
   * for their config: cordis only logs those, and the row would look as if it ran whole.
   */
  childConfigProblems(entry: Entry): string[] {
    const failed = this.childFailures.get(entry)
    if (failed === undefined) return []
    // A fiber disposed since (the row restarted, or its plugin let it go) no longer counts.
    for (const fiber of failed.keys()) if (fiber.uid === null) failed.delete(fiber)
    return [...failed.values()].flat()
  }

  override import(name: string) {
    if (name.startsWith('cordis:')) return super.import(name)
    let url = this.resolved.get(name)
    if (url === undefined) {
      url = resolvePlugin(name, this.file, this.resolveFrom)
      this.resolved.set(name, url)
    }
    const imported = importPlugin(name, url)
    this.importing.add(name)
    const settled = () => this.importing.delete(name)
    imported.then(settled, settled)
    return imported
  }

  /** Whether the module of `name` is still being imported: once the load stalled, it never will be (a top-level await that cannot settle). */
  isImporting(name: string): boolean {
    return this.importing.has(name)
  }

  /** What the loader threw while updating `entry` before its plugin ran, if that is why it has no fiber. */
  startFailure(entry: Entry): unknown {
    return this.startFailures.get(entry)
  }

  /**
   * The loader catches what an entry's update throws before the plugin runs (a `disabled: !!js`
   * expression that throws) and only logs it, leaving the row without a fiber: the report would
   * have nothing to say but "see the log", which `rein config` does not show. So each entry's
   * update is wrapped to keep the error; one from `disabled` is put in words that quote nothing of
   * the expression, and that is what the loader logs.
   */
  private keepStartFailure(entry: Entry) {
    const update = entry.update.bind(entry)
    entry.update = async (...args) => {
      // Every tree's entries come through here; only this tree's are ever asked about.
      if (entry.parent?.tree !== this) return update(...args)
      this.startFailures.delete(entry)
      try {
        await update(...args)
      } catch (error) {
        const failure = disabledFailure(entry) ?? error
        this.startFailures.set(entry, failure)
        throw failure
      }
    }
  }

  /** Before a reload, so a package installed since is found; returns what `restoreResolved` puts back. */
  forgetResolved(): ReadonlyMap<string, string> {
    const previous = this.resolved
    this.resolved = new Map()
    return previous
  }

  /** After a rejected reload: the rows put back run the files they ran, not ones installed since. */
  restoreResolved(previous: ReadonlyMap<string, string>) {
    this.resolved = new Map(previous)
  }
}

/**
 * A config change restarts the row; when the new config makes it fail, cordis rejects a promise
 * nobody holds, which would crash the process. The failure stays on the fiber, where it is reported.
 */
function holdRestarts(tree: EntryTree) {
  tree.ctx.on('internal/update', function (this: Fiber, _config, _noSave, next) {
    const result: unknown = next()
    if (this.entry?.parent.tree !== tree || !isThenable(result)) return result
    return result.then(undefined, () => undefined)
  }, { global: true })
}

/**
 * What a row's start throws for its config is logged by cordis as it is, and kept on the fiber:
 * the error of a `!!js` value that threw may quote the expression (see `evaluate-config.ts`), and a
 * schema's error quotes the value (`expected number but got <value>`), which may be a key read from
 * the environment into the wrong field. Wrapped around the loader's evaluation (prepended:
 * outermost), this throws a `rowFailure` in place of either: the field and the kind of error for
 * an expression (the values are evaluated again to find the field), the schema's problems masked
 * for a value. The same runs before a reload restarts a row, and for a volatile config update.
 */
function sayConfigFailures(tree: EntryTree, childFailures: ChildFailures) {
  tree.ctx.on('internal/config', function (this: Fiber, config, next) {
    const entry = this.entry
    if (entry?.parent.tree !== tree) return next()
    let evaluated: unknown
    try {
      evaluated = next()
    } catch (error) {
      if (!containsJsExpr(config)) throw error
      const { problems } = evaluateConfig((expression) => entry.evaluate(expression), config)
      // An expression that threw once and not again (it reads something that changed): the kind is all there is.
      throw rowFailure(entry.options, problems.length > 0 ? problems : [`config: ${expressionThrew(error)}`])
    }
    if (this.parent.fiber?.entry === entry) return checkChildConfig(this, entry, evaluated, childFailures)
    const unset = undefinedExpressions(config, evaluated)
    if (unset.length > 0) throw rowFailure(entry.options, unset)
    const problems = [...secretNameProblems(evaluated), ...startConfigProblems(evaluated, this.runtime?.Config)]
    if (problems.length > 0) throw rowFailure(entry.options, problems)
    return evaluated
  }, { global: true, prepend: true })
}

/** Per row, the fibers of plugins its plugin started itself whose config was refused, and why. */
type ChildFailures = WeakMap<Entry, Map<Fiber, string[]>>

/**
 * A plugin the row's own plugin starts (`ctx.plugin(Child, config)`) has a config of its own, not
 * the row's, and cordis would log schemastery's ValidationError for it as it is (its words, its
 * stack, a value that may be a key) while the row looks as if it ran. Checked here the same way,
 * it fails with a `rowFailure` naming the row and the plugin, kept for the report.
 */
function checkChildConfig(fiber: Fiber, entry: Entry, config: unknown, childFailures: ChildFailures): unknown {
  const failed = childFailures.get(entry) ?? new Map<Fiber, string[]>()
  childFailures.set(entry, failed)
  failed.delete(fiber)
  const problems = startConfigProblems(config, fiber.runtime?.Config)
  if (problems.length === 0) return config
  const name = fiber.runtime?.name
  const started = name ? `${name}, a plugin it starts, was given an invalid config` : 'a plugin it starts was given an invalid config'
  const failure = rowFailure(entry.options, problems.map((problem) => `${started}: ${problem}`))
  failed.set(fiber, rowFailureProblems(failure) ?? [])
  throw failure
}

/** When evaluating the entry's `disabled` throws: that, in words that quote nothing of the expression. */
function disabledFailure(entry: Entry): unknown {
  try {
    void entry.disabled
    return undefined
  } catch (error) {
    return rowFailure(entry.options, [disabledThrew(entry, error)])
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'then') === 'function'
}
