/** What an agent tells a UI while it works. Every event is also recoverable from the session log. */

import type { FinishReason, LlmEvent, TokenUsage } from '@rein/llm'
import type { TurnEndReason, TurnOverrun } from '@rein/session'
import type { ToolCallView, ToolResultView } from '@rein/tools'

/** One event of a running agent, in the order it happened. */
export type AgentEvent =
  | { type: 'turn-start'; turn: number }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  /** The step's reasoning shown so far came from a provider attempt that failed: drop it, a retry's output follows. */
  | { type: 'discard' }
  | { type: 'tool-start'; callId: string; name: string; card: ToolCallView }
  /** `resumable`: an interrupt ended the call and it was left for the next resume's `recover` (not recorded). */
  | { type: 'tool-end'; callId: string; name: string; isError: boolean; code?: string; card: ToolResultView; resumable?: true }
  /**
   * After each provider attempt with usage (failed ones too): its usage and cost, and the agent's
   * totals. `estimated`: part or all of `usage` is counted from characters (the provider reported none, or not for the output after its last report).
   */
  | { type: 'usage'; usage: TokenUsage; cost?: number; estimated?: true; total: TokenUsage; totalCost?: number; finish: FinishReason }
  /** Before each request: its estimated input tokens against the model's window (absent when unknown). */
  | { type: 'context'; tokens: number; window?: number }
  /** A compaction was written (`context/compacted`): the results and calls' arguments it pruned, whether it summarized, the tokens before and after. */
  | { type: 'compacted'; reason: 'auto' | 'manual' | 'overflow'; pruned: number; prunedArguments: number; summarized: boolean; summaryFailed?: { code: string; message: string }; tokensBefore: number; tokensAfter: number }
  | Exclude<LlmEvent, { type: 'attempt-start' }>
  | { type: 'turn-end'; turn: number; reason: TurnEndReason; error?: { code: string; message: string }; overrun?: TurnOverrun }
  /** An event of a subagent working for one of this agent's tool calls (`callId`), in its own session. */
  | { type: 'subagent'; callId: string; sessionId: string; event: AgentEvent }

/** How a turn ended, what it cost, and what it said last. */
/** Usage and money of a turn's subagents. */
export interface TreeUsage {
  usage: TokenUsage
  /** Undefined when a model a subagent used was unpriced. */
  cost?: number
  usageEstimated?: true
}

/** How a turn ended: its reason and error, if any, and what its attempts used and cost. */
export interface TurnResult {
  turn: number
  /** The run this turn was: `ctx.telemetry.cost(runId)` rolls its subagents' usage up. */
  runId: string
  reason: TurnEndReason
  error?: { code: string; message: string }
  /** A budget the final answer crossed: the turn completed, and this says by how much. */
  overrun?: TurnOverrun
  /** The turn's usage over every attempt, failed and aborted ones included. */
  usage: TokenUsage
  /** Undefined when a model used was unpriced. */
  cost?: number
  /** Part of `usage` is counted from characters: a provider reported none, or not all, of an attempt's output. */
  usageEstimated?: true
  /**
   * What the turn's subagents (theirs included) spent for it, counted once and not in `usage`:
   * while it ran, and before it started when a repair continued them for this run (a resume's, or
   * the next turn's after an interrupt). Absent when none reported usage. Add the two for the
   * turn's whole tree.
   */
  subagents?: TreeUsage
  /** The text of the turn's last assistant message. */
  text: string
}
