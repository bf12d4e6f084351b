/** What an agent tells a UI while it works. Every event is also recoverable from the session log. */

import type { FinishReason, LlmEvent, TokenUsage } from '@rein/llm'
import type { TurnEndReason } from '@rein/session'
import type { ToolCallView, ToolResultView } from '@rein/tools'

export type AgentEvent =
  | { type: 'turn-start'; turn: number }
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-start'; callId: string; name: string; card: ToolCallView }
  | { type: 'tool-end'; callId: string; name: string; isError: boolean; code?: string; card: ToolResultView }
  /** After each request: its usage and cost, and the agent's totals. */
  | { type: 'usage'; usage: TokenUsage; cost?: number; total: TokenUsage; totalCost?: number; finish: FinishReason }
  | LlmEvent
  | { type: 'turn-end'; turn: number; reason: TurnEndReason; error?: { code: string; message: string } }

export interface TurnResult {
  turn: number
  reason: TurnEndReason
  error?: { code: string; message: string }
  /** The turn's usage, summed over its requests. */
  usage: TokenUsage
  /** Undefined when a model used was unpriced. */
  cost?: number
  /** The text of the turn's last assistant message. */
  text: string
}
