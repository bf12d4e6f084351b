/** What callers pass to `ctx.llm.stream`, and the events it reports besides the chunks. */

import type { GenerationOptions } from './adapter.ts'
import type { LlmFailure } from './errors.ts'

export interface ModelRoute {
  provider: string
  model: string
}

/**
 * `maxTokens` defaults to the model's catalog entry, else the provider's own default;
 * `reasoningEffort` must be one the model lists (when the catalog lists any), is never clamped,
 * and defaults to the model's default.
 */
export interface LlmRequest extends ModelRoute, GenerationOptions {
  /** Tried in order when the current route fails before showing anything; see the README. */
  fallbacks?: readonly ModelRoute[]
  signal?: AbortSignal
  /** Retries and fallbacks, as they happen, so a session can log them. */
  onEvent?: (event: LlmEvent) => void
}

export type LlmEvent =
  | { type: 'retry'; provider: string; model: string; attempt: number; delayMs: number; failure: LlmFailure }
  | { type: 'fallback'; from: ModelRoute; to: ModelRoute; failure: LlmFailure }
