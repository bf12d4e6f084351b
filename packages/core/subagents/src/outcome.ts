/** What a child's turn comes to for its call: the answer of a completed one, or an error carrying what it had. */

import type { TurnResult } from '@rein/agent'
import { addMoney, ReinError } from '@rein/base'
import { addUsage } from '@rein/llm'
import type { SubagentResult } from './types.ts'

/** How a child's turn ended, as its result or its log's `turn/end` says. */
export interface ChildEnd {
  reason: string
  error?: { code: string; message: string }
}

/** Error codes by how the child's turn ended; any other end is `SUBAGENT_FAILED`. */
const CODES: Record<string, string> = { aborted: 'SUBAGENT_CANCELLED', interrupted: 'SUBAGENT_INTERRUPTED', timeout: 'SUBAGENT_TIMEOUT' }

/**
 * The call's value for a completed child; a child that did not complete throws what it had.
 * `timedOutAfterMs`: its time limit cancelled it.
 */
export function outcome(sessionId: string, result: TurnResult, streamed: string, timedOutAfterMs?: number): SubagentResult {
  const partial = streamed.trim() !== '' ? streamed : result.text
  if (timedOutAfterMs !== undefined && result.reason === 'aborted') {
    throw unfinished(sessionId, { reason: 'timeout', error: { code: 'SUBAGENT_TIMEOUT', message: `it ran past its limit of ${timedOutAfterMs} ms (timeoutMs)` } }, partial)
  }
  if (result.reason !== 'completed') throw unfinished(sessionId, result, partial)
  const cost = costOf(result)
  return {
    sessionId,
    answer: result.text,
    reason: result.reason,
    usage: result.subagents ? addUsage(result.usage, result.subagents.usage) : result.usage,
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
  return new ReinError(code, `the subagent ${why} (subagent session ${sessionId}; ${next(sessionId, end)}). ${had}`, {
    details: { sessionId, reason: end.reason, partial, ...(end.error ? { error: end.error } : {}) },
  })
}

/**
 * What the model can do next. A child whose context is full (its prompt alone too big, or nothing
 * left to compact) would fail the same way once resumed: a smaller task in a new one is the way on.
 */
function next(sessionId: string, end: ChildEnd): string {
  if (end.error?.code === 'CONTEXT_FULL') return 'its context is full, so resuming it would fail again: call a new subagent with a shorter prompt or a narrower task'
  return `subagent with resume: "${sessionId}" continues it`
}

/** The child turn's money with its own subagents', counted once by the agent; unknown when any part is unpriced. */
function costOf(result: TurnResult): number | undefined {
  if (result.cost === undefined) return undefined
  if (!result.subagents) return result.cost
  return result.subagents.cost === undefined ? undefined : addMoney(result.cost, result.subagents.cost)
}
