/**
 * An `llm/attempt` record for an attempt that got no further than its mark in the log: one a kill
 * cut off (repair writes it, its usage estimated) or one never sent (its mark saved, the request
 * not). It is dated from when that was found and lasted nothing, shaped like the runtime's records.
 */

import type { LlmFailure, TokenUsage } from '@rein/llm'
import type { CoreEventData, StepRequest } from '@rein/session'

/** Where the attempt stood: its route and generation options, its retry, its place in the chain. */
export interface AttemptPlace extends StepRequest {
  retry: number
  fallback: number
}

/** What is known of how it ended besides its failure. */
export interface ClosedEnd {
  /** Estimated: a cut-off request the provider may have billed. */
  usage?: TokenUsage
  cost?: number
  finishReason?: 'aborted' | 'error'
}

/** The record of an attempt that ended at `at`, as soon as it began, with `failure`. */
export function closedAttempt(place: AttemptPlace, at: number, failure: LlmFailure, end: ClosedEnd = {}): CoreEventData['llm/attempt'] {
  const record: CoreEventData['llm/attempt'] = { provider: place.provider, model: place.model, retry: place.retry, fallback: place.fallback, startedAt: at, endedAt: at, shown: false, failure }
  if (end.finishReason !== undefined) record.finishReason = end.finishReason
  if (end.usage !== undefined) Object.assign(record, { usage: end.usage, usageEstimated: true })
  if (place.maxTokens !== undefined) record.maxTokens = place.maxTokens
  if (place.temperature !== undefined) record.temperature = place.temperature
  if (place.reasoningEffort !== undefined) record.reasoningEffort = place.reasoningEffort
  if (end.cost !== undefined) record.cost = end.cost
  return record
}
