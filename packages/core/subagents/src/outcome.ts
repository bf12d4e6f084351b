/** What a child's turn comes to for its call: the answer of a completed one, or an error carrying what it had. */

import type { Context } from '@deepseek-ai/cordis'
import type { TurnResult } from '@rein/agent'
import { ReinError } from '@rein/base'
import type { SubagentResult } from './types.ts'

/** How a child's turn ended, as its result or its log's `turn/end` says. */
export interface ChildEnd {
  reason: string
  error?: { code: string; message: string }
}

/** Error codes by how the child's turn ended; any other end is `SUBAGENT_FAILED`. */
const CODES: Record<string, string> = { aborted: 'SUBAGENT_CANCELLED', interrupted: 'SUBAGENT_INTERRUPTED', timeout: 'SUBAGENT_TIMEOUT' }

/** The slice of `ctx.telemetry` read here, by name: @rein/subagents does not depend on it. */
interface CostSource {
  cost(runId: string): { total: { money?: number } } | undefined
}

/**
 * The call's value for a completed child; a child that did not complete throws what it had.
 * `timedOutAfterMs`: its time limit cancelled it.
 */
export function outcome(ctx: Context, sessionId: string, result: TurnResult, streamed: string, timedOutAfterMs?: number): SubagentResult {
  const partial = streamed.trim() !== '' ? streamed : result.text
  if (timedOutAfterMs !== undefined && result.reason === 'aborted') {
    throw unfinished(sessionId, { reason: 'timeout', error: { code: 'SUBAGENT_TIMEOUT', message: `it ran past its limit of ${timedOutAfterMs} ms (timeoutMs)` } }, partial)
  }
  if (result.reason !== 'completed') throw unfinished(sessionId, result, partial)
  const cost = costOf(ctx, result)
  return {
    sessionId,
    answer: result.text,
    reason: result.reason,
    usage: result.usage,
    ...(cost === undefined ? {} : { cost }),
  }
}

/**
 * A child that did not complete: `SUBAGENT_CANCELLED`, `_INTERRUPTED` or `_FAILED`, whose message
 * carries the reason, its partial answer and its session id — so finished work is not thrown away,
 * and the model can continue it with `resume`.
 */
export function unfinished(sessionId: string, end: ChildEnd, partial: string): ReinError {
  const code = CODES[end.reason] ?? 'SUBAGENT_FAILED'
  const why = end.reason === 'aborted' ? 'was cancelled'
    : end.reason === 'interrupted' ? 'was interrupted (rein shut down)'
      : end.reason === 'timeout' ? `was cancelled: ${end.error?.message ?? 'it ran past its time limit'}`
        : `stopped (${end.reason}${end.error ? `: ${end.error.code} ${end.error.message}` : ''})`
  const had = partial.trim() === '' ? 'It had written nothing yet.' : `What it had so far:\n${partial}`
  return new ReinError(code, `the subagent ${why} (subagent session ${sessionId}; subagent with resume: "${sessionId}" continues it). ${had}`, {
    details: { sessionId, reason: end.reason, partial, ...(end.error ? { error: end.error } : {}) },
  })
}

/** The child run's money, its own children included, when telemetry is composed; else its own. */
function costOf(ctx: Context, result: TurnResult): number | undefined {
  const telemetry = ctx.get('telemetry') as CostSource | undefined
  return telemetry?.cost(result.runId)?.total.money ?? result.cost
}
