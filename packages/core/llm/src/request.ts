/** What callers pass to `ctx.llm.stream`, and the events it reports besides the chunks. */

import type { ToolSpec } from './adapter.ts'
import type { LlmFailure } from './errors.ts'
import type { Message } from './message.ts'

export interface ModelRoute {
  provider: string
  model: string
}

export interface LlmRequest extends ModelRoute {
  system?: string
  messages: readonly Message[]
  tools?: readonly ToolSpec[]
  /** Default: the model's `maxTokens` from the catalog, else the provider's own default. */
  maxTokens?: number
  temperature?: number
  /** Must be one the model lists, when the catalog lists any; never clamped. Default: the model's default. */
  reasoningEffort?: string
  /** Tried in order when the current route fails before showing anything; see the README. */
  fallbacks?: readonly ModelRoute[]
  signal?: AbortSignal
  /** Retries and fallbacks, as they happen, so a session can log them. */
  onEvent?: (event: LlmEvent) => void
}

export type LlmEvent =
  | { type: 'retry'; provider: string; model: string; attempt: number; delayMs: number; failure: LlmFailure }
  | { type: 'fallback'; from: ModelRoute; to: ModelRoute; failure: LlmFailure }
