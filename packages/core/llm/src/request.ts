/** What callers pass to `ctx.llm.stream`, and the events it reports besides the chunks. */

import type { GenerationOptions } from './adapter.ts'
import type { LlmFailure } from './errors.ts'
import type { FinishReason } from './stream.ts'
import type { TokenUsage } from './usage.ts'

/** A model on a provider route: what a request, a fallback entry and an event name. */
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
  /**
   * A ceiling on every attempt's output limit, e.g. what a turn's output budget has left: each
   * route sends min(its `maxTokens` — the request's, else its catalog's — and this). A function is
   * read again before each attempt, so a retry asks for no more than the failed attempts left.
   * One that throws or gives anything but a finite number of 0 or more (or undefined) ends the
   * stream with an `ABORTED` failure.
   */
  maxTokensCap?: number | (() => number | undefined)
  /** Tried in order when the current route fails before showing any text or tool call; see the README. */
  fallbacks?: readonly ModelRoute[]
  signal?: AbortSignal
  /** Retries, fallbacks and every attempt's outcome, as they happen, so a session can log them. */
  onEvent?: (event: LlmEvent) => void
  /**
   * Awaited before each attempt after the request's first (a retry, a fallback), once any backoff
   * is over and right before it is sent: where a caller that logs its requests makes the failed
   * attempt's record and the coming attempt durable. If it rejects, nothing more is sent and the
   * stream ends with an `ABORTED` failure naming why.
   */
  beforeResend?: (next: Resend) => Promise<void>
}

/** The attempt about to be sent again (see `beforeResend`): its route, place, and generation options. */
export type Resend = Pick<LlmAttempt, 'provider' | 'model' | 'retry' | 'fallback' | 'maxTokens' | 'temperature' | 'reasoningEffort'>

/** What an attempt asks for, known before it is sent. */
export type AttemptStart = Pick<LlmAttempt, 'provider' | 'model' | 'retry' | 'fallback' | 'startedAt' | 'maxTokens' | 'temperature' | 'reasoningEffort'>

/**
 * One provider attempt, as it ended — success, failure or abort. The session log keeps one per
 * attempt (`llm/attempt`); lifecycle events and telemetry are built from the same record, so the
 * tokens of a failed or aborted attempt are counted once, here, and nowhere else.
 */
export interface LlmAttempt {
  /** The route tried. */
  provider: string
  /** The model requested. */
  model: string
  /** 0 for the first try on this route, n for its n-th retry. */
  retry: number
  /** Position of the route in the fallback chain: 0 is the primary. */
  fallback: number
  /** Epoch milliseconds. */
  startedAt: number
  endedAt: number
  /** Whether any delta reached the caller (reasoning a `discard` later took back included). */
  shown: boolean
  /** Absent when the attempt succeeded. */
  failure?: LlmFailure
  finishReason?: FinishReason
  /** As the provider reported it, or rein's estimate when `usageEstimated`. */
  usage?: TokenUsage
  /** Part or all of `usage` is counted from characters: the provider reported none, or none for the output after its last report. */
  usageEstimated?: true
  /**
   * With `usageEstimated`, when the provider did report: its last report, which `usage` adds the
   * estimated output after it to. What a counter of provider-reported tokens takes.
   */
  reportedUsage?: TokenUsage
  responseId?: string
  responseModel?: string
  /** The generation options the attempt was sent with, after defaults. */
  maxTokens?: number
  temperature?: number
  reasoningEffort?: string
}

/** What `stream` reports besides its chunks, through `onEvent` and the `llm/<type>` events. */
export type LlmEvent =
  | { type: 'retry'; provider: string; model: string; attempt: number; delayMs: number; failure: LlmFailure }
  /**
   * The chain moved to the next route. `cooldownUntil` (epoch ms) is set when `from` was skipped
   * without a try because it failed recently; `failure` is then the failure that started the cool-down.
   */
  | { type: 'fallback'; from: ModelRoute; to: ModelRoute; failure: LlmFailure; cooldownUntil?: number }
  /** An attempt is about to be sent: what it will ask for. Its `attempt` event follows when it ends. */
  | ({ type: 'attempt-start' } & AttemptStart)
  | ({ type: 'attempt' } & LlmAttempt)
