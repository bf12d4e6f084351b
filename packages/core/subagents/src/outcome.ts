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

/** The slice of `ctx.telemetry` read here, by name: @rein/subagents does not depend on it. */
interface CostSource {
  cost(runId: string): { total: { money?: number } } | undefined
}

/** The call's value for a completed child; a child that did not complete throws what it had. */
export function outcome(ctx: Context, sessionId: string, result: TurnResult, streamed: string): SubagentResult {
  if (result.reason !== 'completed') throw unfinished(sessionId, result, streamed.trim() !== '' ? streamed : result.text)
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
  const code = end.reason === 'aborted' ? 'SUBAGENT_CANCELLED' : end.reason === 'interrupted' ? 'SUBAGENT_INTERRUPTED' : 'SUBAGENT_FAILED'
  const why = end.reason === 'aborted' ? 'was cancelled'
    : end.reason === 'interrupted' ? 'was interrupted (rein shut down)'
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
