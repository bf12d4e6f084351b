/**
 * One stream's way down its fallback chain: which route and retry the next attempt goes to, and
 * the chunks the stream ends with when no attempt is left. Plain methods, not generators: the
 * runtime's one generator asks it what to do between attempts, so a batch passes one generator on
 * its way to the caller, not one per level of the chain.
 */

import type { Logger } from '@deepseek-ai/cordis'
import { messageOf, shorten, type Stop } from '@rein/base'
import type { AdapterRequest, LlmAdapter } from './adapter.ts'
import { abortFailure, CANCELLED, generationOf, type AttemptContext, type FailedAttempt, type InflightAttempts } from './attempt.ts'
import { isRetryableFailure, type LlmFailure } from './errors.ts'
import { capOf, failsEverywhere, fallsBack, resolveRoute, routeLabel, type Cooldowns } from './fallback.ts'
import type { ModelInfos } from './model-info.ts'
import type { LlmEvent, LlmRequest, ModelRoute, Resend } from './request.ts'
import { retryDelay, sleep, type RetryPolicy } from './retry.ts'
import type { StreamChunk } from './stream.ts'

/** What the runtime's state lends a course. */
export interface CourseState {
  adapters: ReadonlyMap<string, LlmAdapter>
  retry: RetryPolicy
  logger: Logger
  cooldowns: Cooldowns
  infos: ModelInfos
  inflight: InflightAttempts
}

/** What to do next: send an attempt (after a discard, when one is due), or end with `chunks`. */
export type CourseStep =
  | { kind: 'attempt'; adapter: LlmAdapter; request: Omit<AdapterRequest, 'signal'>; context: AttemptContext; discard: boolean }
  | { kind: 'end'; chunks: readonly StreamChunk[] }

/** The route being tried, where it stands in the chain, and its retries so far. */
interface Place {
  route: ModelRoute
  position: number
  /** Tried after the rest failed, though it was cooling down. */
  lastResort: boolean
  retry: number
}

/**
 * Goes down the chain: skips broken entries, passes over a cooling route while a later one can be
 * tried (and tries it last if they all fail), retries each route by the policy, until one answers.
 */
export class Course {
  private readonly order: Iterator<[number, boolean]>
  private place: Place | undefined
  private pending: { from: ModelRoute; failure: LlmFailure; cooldownUntil?: number } | undefined
  /** A failure that no fallback can help ended the chain; `untried`: routes were left after it. */
  private over = false
  private untried = false
  private readonly failures: { route: ModelRoute; failure: LlmFailure }[] = []
  private readonly skipped: string[] = []
  private readonly passedOver: number[] = []
  /** Reasoning of a failed attempt the caller still shows, to be discarded before the next attempt. */
  private stale = false
  private sent = 0

  constructor(
    private readonly state: CourseState,
    private readonly chain: readonly ModelRoute[],
    private readonly request: LlmRequest,
    private readonly run: Stop,
    private readonly report: (event: LlmEvent) => void,
  ) {
    this.order = routeOrder(chain.length, this.passedOver)
  }

  /** The next attempt to send, or how the stream ends. */
  async next(): Promise<CourseStep> {
    while (true) {
      const place = this.place ?? this.nextRoute()
      if (place === undefined) return this.finalStep()
      this.place = place
      if (this.run.stopped) return abortedStep(this.run.reason)
      // Read once per attempt, apart from the route: a cap the caller cannot give is its failure
      // and ends the stream, where a route's would move on down the chain.
      const cap = capOf(this.request)
      if (typeof cap === 'object') return this.callerFailed(place.route, cap)
      // Per attempt: a provider swapped or unloaded between retries is seen here.
      const resolved = resolveRoute(place.route, this.state.adapters, this.request, this.state.infos, cap)
      if ('failure' in resolved) {
        this.routeFailed(resolved.failure)
        continue
      }
      const { route, position, retry } = place
      const { beforeResend } = this.request
      if (this.sent > 0 && beforeResend) {
        const refused = await refusal(beforeResend, { provider: route.provider, model: route.model, retry, fallback: position, ...generationOf(resolved.request) })
        if (refused) return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure: refused }] }
        // Cancelled while the caller prepared the resend: nothing may be sent (or announced) after it.
        if (this.run.stopped) return abortedStep(this.run.reason)
      }
      // Only once the next attempt goes: without one, the caller keeps what the failed one showed.
      const discard = this.stale
      this.stale = false
      this.sent++
      return { kind: 'attempt', adapter: resolved.adapter, request: resolved.request, context: { route, retry, position, run: this.run, inflight: this.state.inflight, report: this.report }, discard }
    }
  }

  /** The attempt answered: its route is well again. */
  answered(): void {
    if (this.place) this.state.cooldowns.clear(this.place.route)
  }

  /**
   * After a failed attempt: how the stream ends, or undefined when `next` has another attempt (a
   * retry, once its delay has passed, or the next route).
   */
  async failed({ failure, shown }: FailedAttempt): Promise<CourseStep | undefined> {
    const { run } = this
    if (run.stopped) return abortedStep(run.reason)
    if (shown === 'answer') return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure }] }
    // Reasoning alone can be taken back: the next attempt, if any, is preceded by a discard. When
    // none follows, the caller keeps it as what the failed stream showed.
    if (shown === 'reasoning') this.stale = true
    const place = this.place
    const policy = this.state.retry
    if (place === undefined || !isRetryableFailure(failure) || place.retry >= policy.maxRetries) {
      this.routeFailed(failure)
      return undefined
    }
    const delayMs = retryDelay(policy, place.retry, failure)
    this.report({ type: 'retry', provider: place.route.provider, model: place.route.model, attempt: place.retry + 1, delayMs, failure })
    try {
      await sleep(delayMs, run)
    } catch {
      return abortedStep(run.reason)
    }
    place.retry++
    return undefined
  }

  /** The route tried now is done with, its retries spent or not worth it: on down the chain, or the chain is over. */
  private routeFailed(failure: LlmFailure): void {
    const place = this.place
    this.place = undefined
    if (place === undefined) return
    const { route, position, lastResort } = place
    this.failures.push({ route, failure })
    if (!fallsBack(failure)) {
      this.untried = !lastResort && position < this.chain.length - 1
      this.over = true
      return
    }
    if (failure.code !== 'NO_ADAPTER') this.state.cooldowns.start(route, failure)
    this.pending = { from: route, failure }
  }

  /** The next route worth trying, telling of the move from the last one; undefined when none is left. */
  private nextRoute(): Place | undefined {
    const { adapters, cooldowns, logger, infos } = this.state
    // Vetting only: the cap is no part of whether a route can serve, and is read when one is sent.
    const usable = (route: ModelRoute) => !('failure' in resolveRoute(route, adapters, this.request, infos, undefined))
    while (!this.over) {
      const step = this.order.next()
      if (step.done) return undefined
      const [position, lastResort] = step.value
      const route = this.chain[position]
      if (route === undefined) continue
      if (position > 0 && !lastResort) {
        const resolved = resolveRoute(route, adapters, this.request, infos, undefined)
        if ('failure' in resolved) {
          this.skipped.push(`fallback ${routeLabel(route)} skipped: ${resolved.failure.message}`)
          // cordis's default level hides warn; a broken chain is a config bug the user must see.
          logger.error('fallback %s skipped (check the fallback chain): %s', routeLabel(route), resolved.failure.message)
          continue
        }
      }
      const { pending } = this
      if (pending) this.report({ type: 'fallback', from: pending.from, to: route, failure: pending.failure, ...(pending.cooldownUntil !== undefined ? { cooldownUntil: pending.cooldownUntil } : {}) })
      const cooling = lastResort ? undefined : cooldowns.active(route)
      if (cooling && this.chain.slice(position + 1).some((later) => usable(later) && !cooldowns.active(later))) {
        this.pending = { from: route, failure: cooling.failure, cooldownUntil: cooling.until }
        this.passedOver.push(position)
        continue
      }
      return { route, position, lastResort, retry: 0 }
    }
    return undefined
  }

  /** The end of a stream the caller failed (its `maxTokensCap`) before `route` was sent, naming the routes that failed before. */
  private callerFailed(route: ModelRoute, failure: LlmFailure): CourseStep {
    this.place = undefined
    this.over = true
    const failed = [...this.failures, { route, failure }]
    return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure: finalFailure(failed, undefined, false, this.skipped) }] }
  }

  /** The end of a chain that never answered. */
  private finalStep(): CourseStep {
    return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure: finalFailure(this.failures, this.pending?.failure, this.untried, this.skipped) }] }
  }
}

/** The caller's `beforeResend`, awaited: the failure that stops the attempt when it rejects. */
async function refusal(beforeResend: NonNullable<LlmRequest['beforeResend']>, next: Resend): Promise<LlmFailure | undefined> {
  try {
    await beforeResend(next)
    return undefined
  } catch (error) {
    return { code: 'ABORTED', message: `the caller could not prepare the next attempt, so it was not sent: ${messageOf(error)}` }
  }
}

/** Each position of a chain of `length`, then those passed over while cooling (as a last resort), each once. */
function* routeOrder(length: number, passedOver: readonly number[]): Generator<[number, boolean]> {
  for (let position = 0; position < length; position++) yield [position, false]
  // Read once the first pass is over: it fills `passedOver`.
  for (const position of passedOver) yield [position, true]
}

/**
 * The failure a chain that never answered ends with: the last route's, naming the routes that
 * failed before it (the primary's "insufficient balance" must not hide behind a fallback's 503),
 * why the rest were not tried, and the fallback entries skipped as broken.
 */
function finalFailure(failed: readonly { route: ModelRoute; failure: LlmFailure }[], pending: LlmFailure | undefined, untried: boolean, skipped: readonly string[]): LlmFailure {
  const last = failed.at(-1)?.failure
  let failure = last ?? pending ?? { code: 'NO_ADAPTER', message: 'no route in the chain could be tried' }
  const earlier = failed.slice(0, -1).map(({ route, failure: { code, message } }) => `${routeLabel(route)} failed with ${code}: ${shorten(message, 200)}`)
  if (earlier.length > 0) failure = { ...failure, message: `${failure.message} (before it: ${earlier.join('; ')})` }
  if (untried && failsEverywhere(failure)) {
    failure = { ...failure, message: `${failure.message} (not sent to a fallback model: another model would fail the same way)` }
  }
  if (skipped.length > 0) failure = { ...failure, message: `${failure.message} (${skipped.join('; ')})` }
  return failure
}

/** The terminal chunk of a stream the caller cancelled or the service stopped. */
export function aborted(reason: unknown): StreamChunk {
  const failure = abortFailure(reason, { provider: '', model: '' }) ?? { ...CANCELLED }
  return { type: 'finish', reason: 'aborted', failure }
}

function abortedStep(reason: unknown): CourseStep {
  return { kind: 'end', chunks: [aborted(reason)] }
}
