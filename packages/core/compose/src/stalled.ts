/**
 * A load whose caller knows nothing else can happen (Node's event loop ran empty: `beforeExit`)
 * while it still waits: a row whose apply awaits a promise nothing will settle. Without this the
 * load would never settle, and Node exits 13 without a word.
 */

import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import type { ConfigTree } from './config-tree.ts'
import { diagnose, NEVER_IMPORTED } from './diagnose.ts'
import { enabledRows } from './preflight.ts'
import { rowLabel } from './row-plugin.ts'

class LoadStalled extends Error {}

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
