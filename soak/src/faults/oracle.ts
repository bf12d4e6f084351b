/**
 * The documented outcome of a run of faults, worked out from the docs alone: `@rein/llm`'s README
 * (retry before the first delta for the retryable codes, up to `maxRetries`, waiting the provider's
 * Retry-After up to `retryAfterCapMs` or the backoff; the §Fallback table; the §Cool-down rule) and
 * `@rein/agent`'s (a turn is steps while the model asks for tools; how a turn ends). It predicts the
 * `llm/attempt`, `llm/retry` and `llm/fallback` records each turn writes, in order, and how the turn
 * ends, so a case can be compared record by record.
 */

import type { LlmFailureCode } from '@rein/llm'
import type { Effect, Fault } from './catalog.ts'

/** Where a request goes: the agent's model, or its fallback model. */
export type Route = 'primary' | 'fallback'

/** What one request to a route gets: a fault from the catalog, or a healthy answer. */
export type Item = { fault: Fault } | { healthy: 'text' | 'tool' }

export interface OracleTiming {
  maxRetries: number
  initialDelayMs: number
  maxDelayMs: number
  retryAfterCapMs: number
}

export interface ExpectedTurn {
  reason: 'completed' | 'error' | 'max-tokens' | 'budget'
  code?: string
  /** The turn's attempt, retry and fallback records, as `recordLine` writes them. */
  records: string[]
}

/** The retryable codes (`@rein/llm` README, "What stream guarantees"). */
const RETRYABLE: ReadonlySet<string> = new Set(['RATE_LIMIT', 'SERVER', 'OVERLOADED', 'TIMEOUT', 'TRANSPORT', 'STREAM_CLOSED', 'EMPTY_RESPONSE'])
/** The §Fallback table's rows that fall back at once, without retrying. */
const AT_ONCE: ReadonlySet<string> = new Set(['AUTH', 'QUOTA', 'MISSING_CREDENTIAL', 'INVALID_CREDENTIAL', 'MALFORMED_RESPONSE', 'NO_ADAPTER'])

/** Whether the docs say a failure with `code` is retried on its route. */
export function retriedCode(code: string): boolean {
  return RETRYABLE.has(code)
}

type Failure = { code: LlmFailureCode; shown: boolean; retryAfterMs?: number; modelNotFound?: true }

function fallsBack(failure: Failure): boolean {
  return RETRYABLE.has(failure.code) || AT_ONCE.has(failure.code) || failure.modelNotFound === true
}

/** One record as the comparison writes it, e.g. `attempt primary#1 ok`, `retry 30`, `fallback primary>fallback`. */
export function recordLine(record: { kind: 'attempt'; route: Route; retry: number; code?: string; shown?: boolean } | { kind: 'retry'; delayMs: number } | { kind: 'fallback'; from: Route; to: Route }): string {
  if (record.kind === 'retry') return `retry ${record.delayMs}`
  if (record.kind === 'fallback') return `fallback ${record.from}>${record.to}`
  return `attempt ${record.route}#${record.retry} ${record.code ?? 'ok'}${record.code && record.shown ? ' shown' : ''}`
}

/**
 * Plays a sequence's turns against the documented rules. Holds what persists between turns of one
 * session: what is left of each route's replies, and which routes are cooling down.
 */
export class Oracle {
  private readonly cooling = new Set<Route>()

  constructor(
    private readonly queues: Record<Route, Item[]>,
    private readonly timing: OracleTiming,
    private readonly fallback: boolean,
    private readonly maxSteps: number,
  ) {}

  /** The next turn's expected records and ending. */
  turn(): ExpectedTurn {
    const records: string[] = []
    for (let step = 1; step <= this.maxSteps; step++) {
      const outcome = this.stream(records)
      if ('code' in outcome) return { reason: 'error', code: outcome.code, records }
      if (outcome.answer === 'length') return { reason: 'max-tokens', code: 'MAX_TOKENS', records }
      if (outcome.answer === 'text') return { reason: 'completed', records }
    }
    return { reason: 'budget', code: 'MAX_STEPS', records }
  }

  /** One `ctx.llm.stream`: the chain with its retries, fallbacks and cool-downs. */
  private stream(records: string[]): Effect {
    const chain: Route[] = this.fallback ? ['primary', 'fallback'] : ['primary']
    let last: Failure | undefined
    let pending: Route | undefined
    for (let position = 0; position < chain.length; position++) {
      const route = chain[position]!
      if (pending) records.push(recordLine({ kind: 'fallback', from: pending, to: route }))
      // A cooling route is skipped when a later one is not cooling (every route here is usable).
      if (this.cooling.has(route) && chain.slice(position + 1).some((later) => !this.cooling.has(later))) {
        pending = route
        continue
      }
      const outcome = this.route(route, records)
      if (!('code' in outcome)) {
        this.cooling.delete(route)
        return outcome
      }
      if (outcome.shown && !outcome.takenBack) return outcome
      last = outcome
      if (!fallsBack(outcome)) break
      this.cooling.add(route)
      pending = route
    }
    return last!
  }

  /** One route: attempts until one answers, shows something, or fails for good. */
  private route(route: Route, records: string[]): Effect {
    for (let retry = 0; ; retry++) {
      const effect = this.next(route)
      const failure = 'code' in effect ? effect : undefined
      records.push(recordLine({ kind: 'attempt', route, retry, ...(failure ? { code: failure.code, shown: failure.shown } : {}) }))
      if (!failure || (failure.shown && !failure.takenBack)) return effect
      if (!RETRYABLE.has(failure.code) || retry >= this.timing.maxRetries) return failure
      records.push(recordLine({ kind: 'retry', delayMs: this.delay(retry, failure) }))
    }
  }

  private next(route: Route): Effect {
    const item = this.queues[route].shift()
    if (!item) return { answer: 'text' }
    return 'fault' in item ? item.fault.effect : { answer: item.healthy }
  }

  /** Retry-After up to the cap, else the backoff (jitter is 0 here). */
  private delay(retry: number, failure: Failure): number {
    const { initialDelayMs, maxDelayMs, retryAfterCapMs } = this.timing
    if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, retryAfterCapMs)
    return Math.min(initialDelayMs * 2 ** retry, maxDelayMs)
  }
}
