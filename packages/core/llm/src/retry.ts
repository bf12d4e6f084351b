/** When to try again and how long to wait: exponential backoff with jitter, Retry-After honoured up to a cap. */

import type { LlmFailure } from './errors.ts'
import { MAX_TIMER_MS, type Stop } from '@rein/base'

/** How many times a route is retried and how long each wait is (Config `retry`). */
export interface RetryPolicy {
  /** Retries after the first attempt, per provider in a fallback chain. */
  maxRetries: number
  initialDelayMs: number
  maxDelayMs: number
  /** ± this fraction of the delay, at random. */
  jitter: number
  /** Longest Retry-After honoured; a longer one is cut to this. */
  retryAfterCapMs: number
}

/** The Config `retry` defaults: 5 retries, 500 ms doubling to 10 s, ±10% jitter, Retry-After up to 30 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxRetries: 5,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  jitter: 0.1,
  retryAfterCapMs: 30_000,
})

/** Delay before retry number `retry` (0 for the first retry); never more than a timer can hold. */
export function retryDelay(policy: RetryPolicy, retry: number, failure: LlmFailure, random: () => number = Math.random): number {
  if (failure.retryAfterMs !== undefined && Number.isFinite(failure.retryAfterMs) && failure.retryAfterMs >= 0) {
    return Math.min(failure.retryAfterMs, policy.retryAfterCapMs, MAX_TIMER_MS)
  }
  const base = Math.min(policy.initialDelayMs * 2 ** retry, policy.maxDelayMs)
  const spread = base * policy.jitter * (random() * 2 - 1)
  return Math.min(MAX_TIMER_MS, Math.max(0, Math.round(base + spread)))
}

/** Resolves after `ms`, or rejects with the run's reason as soon as it stops. */
export function sleep(ms: number, run: Stop): Promise<void> {
  return new Promise((resolve, reject) => {
    if (run.stopped) {
      reject(run.reason as Error)
      return
    }
    const off = run.onStop(() => {
      clearTimeout(timer)
      reject(run.reason as Error)
    })
    const timer = setTimeout(() => {
      off()
      resolve()
    }, ms)
  })
}
