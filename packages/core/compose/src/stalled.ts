/**
 * A load whose caller knows nothing else can happen (Node's event loop ran empty: `beforeExit`)
 * while it still waits: a row whose apply awaits a promise nothing will settle. Without this the
 * load would never settle, and Node exits 13 without a word. And a load that is only taking long,
 * which may yet settle, or never settle while a plugin keeps a timer or a socket open (the loop
 * never runs empty): what it waits for, so its caller can say so and wait on.
 */

import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import type { ConfigTree } from './config-tree.ts'
import { diagnose, isApplying, NEVER_IMPORTED } from './diagnose.ts'
import { enabledRows } from './preflight.ts'
import { rowLabel } from './row-plugin.ts'

class LoadStalled extends Error {}

/** Whether `error` is `untilStalled`'s rejection (the load stalled), not the load's own failure. */
export function isStalled(error: unknown): boolean {
  return error instanceof LoadStalled
}

/** `work`, or a `LoadStalled` rejection as soon as `signal` aborts (`work` itself is left running). */
export function untilStalled<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new LoadStalled('the composition stalled while loading'))
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    // Handled either way: once stalled, nobody waits for `work`, and its rejection must not go unhandled.
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/**
 * What a stalled load waits for: the rows still starting (and the rows waiting for them), or,
 * before any row started, the rows whose module is still importing.
 */
export async function stalledProblems(tree: ConfigTree, rows: readonly EntryOptions[]): Promise<string[]> {
  const problems = await diagnose(tree)
  if (problems.length > 0) return problems
  const importing = enabledRows(rows).filter((row) => tree.isImporting(row.name))
  if (importing.length > 0) return importing.map((row) => `${rowLabel(row)}: ${NEVER_IMPORTED}`)
  return ['never finished loading: every row started, but a compose/check listener awaits something that can never settle']
}

/** What a load that is taking long still waits for (see `CompositionOptions.onSlow`). */
export interface SlowLoad {
  /**
   * Where the load is: importing the rows' modules (before any row starts), starting the rows, or
   * waiting for the `compose/check` listeners once every row started.
   */
  step: 'import' | 'start' | 'check'
  /** The rows that step waits for, as `row "<id>" (<name>)`: importing, or in their apply. None at `check`. */
  rows: string[]
}

/**
 * What a load at `step` waits for now. Unlike `stalledProblems`, it only reads state: `diagnose`
 * imports each row's plugin again, evaluates `!!js` values (the user's code) and waits for fibers,
 * none of which may disturb a load that goes on, and it words each row as never settling, which a
 * slow row may yet do.
 */
export function slowLoad(tree: ConfigTree, rows: readonly EntryOptions[], step: SlowLoad['step']): SlowLoad {
  if (step === 'check') return { step, rows: [] }
  if (step === 'import') return { step, rows: enabledRows(rows).filter((row) => tree.isImporting(row.name)).map((row) => rowLabel(row)) }
  // The loader imports each module again as its row starts; it was imported before, so this rarely shows.
  const starting = [...tree.entries()].filter((entry) => tree.isImporting(entry.options.name) || isApplying(entry))
  return { step, rows: starting.map((entry) => rowLabel(entry.options)) }
}
