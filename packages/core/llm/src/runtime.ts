/** The `ctx.llm` service: adapter routes, model metadata, and one `stream` with retry and fallback. */

import { Context, Service, type Logger } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { MAX_TIMER_MS, ReinError, Stop, eventSender, messageOf, shorten, type EventSender } from '@rein/base'
import type { LlmAdapter, ModelInfo, ProviderEndpoint } from './adapter.ts'
import { abortFailure, CANCELLED, generationOf, InflightAttempts, runAttempt, STOPPED } from './attempt.ts'
import { isRetryableFailure, type LlmFailure } from './errors.ts'
import { Cooldowns, dedupe, failsEverywhere, fallsBack, resolveRoute, routeLabel } from './fallback.ts'
import { ModelInfos } from './model-info.ts'
import type { LlmEvent, LlmRequest, ModelRoute, Resend } from './request.ts'
import { requestShapeProblem, routesProblem } from './request-shape.ts'
import { DEFAULT_RETRY_POLICY, retryDelay, sleep, type RetryPolicy } from './retry.ts'
import type { StreamChunk } from './stream.ts'
import { costOfUsage, type Pricing, type TokenUsage } from './usage.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    llm: LlmRuntime
  }
  interface Events {
    'llm/retry'(event: Extract<LlmEvent, { type: 'retry' }>): void
    'llm/fallback'(event: Extract<LlmEvent, { type: 'fallback' }>): void
    'llm/attempt'(event: Extract<LlmEvent, { type: 'attempt' }>): void
    'llm/attempt-start'(event: Extract<LlmEvent, { type: 'attempt-start' }>): void
  }
}

/** The plugin's Config after defaults (see the README's Config table). */
export interface LlmRuntimeConfig {
  retry: RetryPolicy
  /**
   * How long a route that failed over is skipped by later streams that have somewhere else to go;
   * 0 turns this off. Default 300000 (optional, so configs written before it existed still fit).
   */
  fallbackCooldownMs?: number
  /** How long a model catalog lookup (`resolveModel` answering with a promise) is waited for. Default 30000. */
  catalogTimeoutMs?: number
  /** Prices by route, then model, that replace (or stand in for) the adapters' catalogs: money per million tokens. */
  prices?: PriceOverrides
}

/** `{<route>: {<model>: Pricing}}`: a model's prices by the route that serves it. */
export type PriceOverrides = Record<string, Record<string, Pricing>>

type RuntimeConfigInput = { retry?: Partial<RetryPolicy>; fallbackCooldownMs?: number; catalogTimeoutMs?: number; prices?: PriceOverrides }

const PRICING: Schema<Pricing> = Schema.object({
  input: Schema.number().min(0).required().description('Input read at the full price, per million tokens.'),
  output: Schema.number().min(0).required().description('Output, reasoning included, per million tokens.'),
  cacheRead: Schema.number().min(0).description('Input served from the prompt cache. Default: input.'),
  cacheWrite: Schema.number().min(0).description('Input written to the prompt cache. Default: input.'),
}) as Schema<Pricing>

interface RuntimeState {
  adapters: Map<string, LlmAdapter>
  retry: RetryPolicy
  logger: Logger
  cooldowns: Cooldowns
  inflight: InflightAttempts
  infos: ModelInfos
  /** Every running stream's stop, so disposing the service stops them all. */
  runs: Set<Stop>
  prices: PriceOverrides
  stopped: boolean
  /** `llm/*` events, sent per attempt and per retry. */
  events: EventSender<LlmEvents>
}

type Report = (event: LlmEvent) => void

/** Each `llm/<type>` event's listeners get the event of that type. */
type LlmEvents = Record<`llm/${LlmEvent['type']}`, (event: LlmEvent) => void>

const DEFAULT_COOLDOWN_MS = 300_000
const DEFAULT_CATALOG_TIMEOUT_MS = 30_000

/** The `ctx.llm` service (also the default export): load it as `@rein/llm`; adapters register on it, callers `stream` through it. */
export class LlmRuntime extends Service {
  static readonly Config: Schema<RuntimeConfigInput, LlmRuntimeConfig> = Schema.object({
    retry: Schema.object({
      maxRetries: Schema.natural().default(DEFAULT_RETRY_POLICY.maxRetries).description('Retries per route after the first attempt.'),
      initialDelayMs: Schema.natural().default(DEFAULT_RETRY_POLICY.initialDelayMs).description('First backoff delay.'),
      maxDelayMs: Schema.natural().default(DEFAULT_RETRY_POLICY.maxDelayMs).description('Longest backoff delay.'),
      jitter: Schema.number().min(0).max(1).default(DEFAULT_RETRY_POLICY.jitter).description('Random ± fraction of each delay.'),
      retryAfterCapMs: Schema.natural().default(DEFAULT_RETRY_POLICY.retryAfterCapMs).description('Longest Retry-After honoured.'),
    }).default({} as RetryPolicy),
    fallbackCooldownMs: Schema.natural().default(DEFAULT_COOLDOWN_MS).description('How long later streams skip a route that failed over; 0 turns it off.'),
    catalogTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(DEFAULT_CATALOG_TIMEOUT_MS).description('How long a model catalog lookup is waited for; past it the model counts as having no metadata until the lookup answers.'),
    prices: Schema.dict(Schema.dict(PRICING)).default({}).description('Prices by route, then model, replacing the catalogs\' (money per million tokens).'),
  }) as Schema<RuntimeConfigInput, LlmRuntimeConfig>

  // Service methods run on cordis's tracing proxy; state lives in one object read once per call.
  private _state: RuntimeState

  constructor(ctx: Context, public config: LlmRuntimeConfig) {
    super(ctx, 'llm')
    checkPrices(config.prices ?? {})
    const logger = ctx.logger('llm')
    const state: RuntimeState = {
      adapters: new Map(), retry: config.retry, logger,
      cooldowns: new Cooldowns(config.fallbackCooldownMs ?? DEFAULT_COOLDOWN_MS), inflight: new InflightAttempts(), infos: new ModelInfos(config.catalogTimeoutMs ?? DEFAULT_CATALOG_TIMEOUT_MS), runs: new Set(), stopped: false,
      prices: config.prices ?? {},
      events: eventSender<LlmEvents>(ctx, (name, error) => logger.error('an %s listener failed: %s', name, error)),
    }
    this._state = state
    ctx.effect(() => () => {
      state.stopped = true
      for (const run of state.runs) run.stop(STOPPED)
    }, 'llm: stop running streams')
  }

  /**
   * Serves `routes` (provider ids such as `openai` or `deepseek`) with `adapter` until the returned
   * disposer runs or the calling plugin is disposed. All or nothing: one taken route → `DUPLICATE_ADAPTER`.
   * Disposing stops the attempts the adapter is running for these routes (see the README).
   */
  registerAdapter(routes: string | readonly string[], adapter: LlmAdapter): () => Promise<void> {
    const wrongRoutes = routesProblem(routes)
    if (wrongRoutes) throw new ReinError('INVALID_ROUTE', wrongRoutes)
    if (!canStream(adapter)) throw new ReinError('INVALID_ADAPTER', 'registerAdapter needs an adapter with a stream (or streamBatches) method: an LlmAdapter')
    const list = typeof routes === 'string' ? [routes] : [...routes]
    const { adapters, inflight } = this._state
    return this.ctx.effect(() => {
      const taken = list.filter((route) => adapters.has(route))
      if (taken.length > 0) {
        throw new ReinError('DUPLICATE_ADAPTER', `provider route ${taken.map((route) => `"${route}"`).join(', ')} is already served by another adapter; dispose it first`)
      }
      for (const route of list) adapters.set(route, adapter)
      return () => {
        for (const route of list) if (adapters.get(route) === adapter) adapters.delete(route)
        inflight.unload(adapter, list)
      }
    }, `llm.registerAdapter(${list.join(', ')})`)
  }

  /** Registered provider routes, sorted. */
  providers(): string[] {
    return [...this._state.adapters.keys()].sort()
  }

  /**
   * Metadata for a model, as far as it is known now: an adapter that answers asynchronously is
   * reflected after `modelInfo` (which every stream awaits) resolved it once.
   */
  resolveModel(provider: string, model: string): ModelInfo | undefined {
    const { adapters, infos, prices } = this._state
    return withPrice(infos.peek(adapters.get(provider), provider, model), prices, provider, model)
  }

  /** Metadata for a model, waiting for an adapter that looks it up; undefined when it has none or the lookup fails. */
  async modelInfo(provider: string, model: string, signal?: AbortSignal): Promise<ModelInfo | undefined> {
    const { adapters, infos, prices } = this._state
    return withPrice(await infos.resolve(adapters.get(provider), provider, model, signal), prices, provider, model)
  }

  listModels(provider: string): readonly ModelInfo[] {
    return this._state.adapters.get(provider)?.listModels?.(provider) ?? []
  }

  /** Where a route's requests go (label and base URL), when its adapter says; never credentials. */
  endpoint(provider: string): ProviderEndpoint | undefined {
    return this._state.adapters.get(provider)?.endpoint?.(provider)
  }

  /** A model's prices: Config `prices`, else its catalog's; undefined when neither has one. */
  pricing(provider: string, model: string): Pricing | undefined {
    const { adapters, infos, prices } = this._state
    return priceOverride(prices, provider, model) ?? infos.peek(adapters.get(provider), provider, model)?.pricing
  }

  /** Cost of `usage` at the model's `pricing`; undefined when it has none. */
  costOf(provider: string, model: string, usage: TokenUsage): number | undefined {
    const pricing = this.pricing(provider, model)
    return pricing ? costOfUsage(pricing, usage) : undefined
  }

  /**
   * Streams one answer. Never throws: every failure ends the stream with `finish {reason: 'error'}`
   * (or `'aborted'`) carrying an `LlmFailure`. Failures before any text or tool call was shown are
   * retried and then sent down `fallbacks` (reasoning already shown is taken back with a `discard`
   * before the next attempt); once text or a tool call was shown, the stream ends with the failure
   * instead. Every provider attempt is reported as an `attempt` event when it ends.
   */
  async *stream(request: LlmRequest): AsyncGenerator<StreamChunk, void, undefined> {
    // Read once, and safely: a request that is none ends in streamBatches with INVALID_REQUEST.
    const signal = (request as LlmRequest | null | undefined)?.signal
    for await (const batch of this.streamBatches(request)) {
      for (const chunk of batch) {
        // A caller that aborts while it handles a chunk gets none after it: the next read ends the stream aborted.
        if (signal?.aborted && chunk.type !== 'finish') break
        yield chunk
      }
    }
  }

  /**
   * `stream` as the chunks that arrived together (an adapter's `streamBatches`, one read each):
   * the same chunks in the same order, for a consumer that would rather await once per read than
   * once per chunk. Each array is non-empty.
   */
  async *streamBatches(request: LlmRequest): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    const state = this._state
    if (state.stopped) {
      yield [aborted(STOPPED)]
      return
    }
    const wrong = requestShapeProblem(request)
    if (wrong) {
      yield [{ type: 'finish', reason: 'error', failure: { code: 'INVALID_REQUEST', message: wrong } }]
      return
    }
    const chain = dedupe([{ provider: request.provider, model: request.model }, ...(request.fallbacks ?? [])])
    // Adapters that look their catalog up answer here once; every later check reads the answer.
    await Promise.all(chain.map((route) => this.modelInfo(route.provider, route.model, request.signal)))
    // Stopped while the catalog answered: nothing may be sent after dispose.
    if (state.stopped) {
      yield [aborted(STOPPED)]
      return
    }
    // Only the primary must be usable up front; a broken fallback entry is skipped when reached.
    const primary = resolveRoute(chain[0]!, state.adapters, request, state.infos)
    if ('failure' in primary) {
      yield [{ type: 'finish', reason: 'error', failure: primary.failure }]
      return
    }
    const run = new Stop()
    const caller = request.signal
    const cancel = () => run.stop(CANCELLED)
    if (caller?.aborted) cancel()
    else caller?.addEventListener('abort', cancel, { once: true })
    state.runs.add(run)
    const report: Report = (event) => {
      try {
        request.onEvent?.(event)
      } catch (error) {
        state.logger.error('an llm onEvent callback failed: %s', error)
      }
      state.events.send(`llm/${event.type}`, [event])
    }
    try {
      yield* this.walk(chain, request, run, report)
    } finally {
      state.runs.delete(run)
      caller?.removeEventListener('abort', cancel)
    }
  }

  /**
   * Goes down the chain: skips broken entries, passes over a cooling route while a later one can
   * be tried (and tries it last if they all fail), tries the rest until one answers.
   */
  private async *walk(chain: readonly ModelRoute[], request: LlmRequest, run: Stop, report: Report): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    const { adapters, cooldowns, logger, infos } = this._state
    const usable = (route: ModelRoute) => !('failure' in resolveRoute(route, adapters, request, infos))
    let pending: { from: ModelRoute; failure: LlmFailure; cooldownUntil?: number } | undefined
    let untried = false
    const failed: { route: ModelRoute; failure: LlmFailure }[] = []
    const progress: Progress = { stale: false, sent: 0 }
    const skipped: string[] = []
    const passedOver: number[] = []
    for (const [position, lastResort] of routeOrder(chain.length, passedOver)) {
      const route = chain[position]!
      if (position > 0 && !lastResort) {
        const resolved = resolveRoute(route, adapters, request, infos)
        if ('failure' in resolved) {
          skipped.push(`fallback ${routeLabel(route)} skipped: ${resolved.failure.message}`)
          // cordis's default level hides warn; a broken chain is a config bug the user must see.
          logger.error('fallback %s skipped (check the fallback chain): %s', routeLabel(route), resolved.failure.message)
          continue
        }
      }
      if (pending) report({ type: 'fallback', from: pending.from, to: route, failure: pending.failure, ...(pending.cooldownUntil !== undefined ? { cooldownUntil: pending.cooldownUntil } : {}) })
      const cooling = lastResort ? undefined : cooldowns.active(route)
      if (cooling && chain.slice(position + 1).some((later) => usable(later) && !cooldowns.active(later))) {
        pending = { from: route, failure: cooling.failure, cooldownUntil: cooling.until }
        passedOver.push(position)
        continue
      }
      const outcome = yield* this.tryRoute(route, position, request, run, report, progress)
      if (outcome === 'done') return
      failed.push({ route, failure: outcome })
      if (!fallsBack(outcome)) {
        untried = !lastResort && position < chain.length - 1
        break
      }
      if (outcome.code !== 'NO_ADAPTER') cooldowns.start(route, outcome)
      pending = { from: route, failure: outcome }
    }
    yield [{ type: 'finish', reason: 'error', failure: finalFailure(failed, pending?.failure, untried, skipped) }]
  }

  /** One route with its retries. Returns the failure that ended it, or `done` when the stream has ended. */
  private async *tryRoute(route: ModelRoute, position: number, request: LlmRequest, run: Stop, report: Report, progress: Progress): AsyncGenerator<readonly StreamChunk[], LlmFailure | 'done', undefined> {
    const { adapters, retry: policy, inflight, infos } = this._state
    for (let retry = 0; ; retry++) {
      if (run.stopped) {
        yield [aborted(run.reason)]
        return 'done'
      }
      // Per attempt: a provider swapped or unloaded between retries is seen here.
      const resolved = resolveRoute(route, adapters, request, infos)
      if ('failure' in resolved) return resolved.failure
      if (progress.sent > 0 && request.beforeResend) {
        const refused = await refusal(request.beforeResend, { provider: route.provider, model: route.model, retry, fallback: position, ...generationOf(resolved.request) })
        if (refused) {
          yield [{ type: 'finish', reason: 'error', failure: refused }]
          return 'done'
        }
      }
      // Only once the next attempt goes: without one, the caller keeps what the failed one showed.
      if (progress.stale) {
        progress.stale = false
        yield [DISCARD]
      }
      progress.sent++
      const result = yield* runAttempt(resolved.adapter, resolved.request, { route, retry, position, run, inflight, report })
      if (result.ok) {
        this._state.cooldowns.clear(route)
        return 'done'
      }
      if (run.stopped) {
        yield [aborted(run.reason)]
        return 'done'
      }
      if (result.shown === 'answer') {
        yield [{ type: 'finish', reason: 'error', failure: result.failure }]
        return 'done'
      }
      // Reasoning alone can be taken back: the next attempt, if any, is preceded by a discard. When
      // none follows, the caller keeps it as what the failed stream showed.
      if (result.shown === 'reasoning') progress.stale = true
      const { failure } = result
      if (!isRetryableFailure(failure) || retry >= policy.maxRetries) return failure
      const delayMs = retryDelay(policy, retry, failure)
      report({ type: 'retry', provider: route.provider, model: route.model, attempt: retry + 1, delayMs, failure })
      try {
        await sleep(delayMs, run)
      } catch {
        yield [aborted(run.reason)]
        return 'done'
      }
    }
  }
}

/** One request's course across its routes: reasoning of a failed attempt the caller still shows, to be discarded before the next attempt; attempts sent. */
interface Progress {
  stale: boolean
  sent: number
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


const DISCARD: StreamChunk = Object.freeze({ type: 'discard' })

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
function aborted(reason: unknown): StreamChunk {
  const failure = abortFailure(reason, { provider: '', model: '' }) ?? { ...CANCELLED }
  return { type: 'finish', reason: 'aborted', failure }
}

/** The Config's price for a model on a route, if it names one. */
function priceOverride(prices: PriceOverrides, provider: string, model: string): Pricing | undefined {
  const byModel = Object.hasOwn(prices, provider) ? prices[provider] : undefined
  return byModel !== undefined && Object.hasOwn(byModel, model) ? byModel[model] : undefined
}

/**
 * The catalog's facts with the Config's price for the model. A model no catalog knows gets no
 * invented entry (that would claim, say, that it takes no reasoning effort): `pricing` finds its price.
 */
function withPrice(info: ModelInfo | undefined, prices: PriceOverrides, provider: string, model: string): ModelInfo | undefined {
  const pricing = priceOverride(prices, provider, model)
  return info === undefined || pricing === undefined ? info : { ...info, pricing }
}

const PRICE_KEYS = new Set(['input', 'output', 'cacheRead', 'cacheWrite'])

/** What the schema lets through but no price may be: a key it does not know, a number that is not finite. */
function checkPrices(prices: PriceOverrides): void {
  for (const [route, models] of Object.entries(prices)) {
    for (const [model, pricing] of Object.entries(models)) {
      for (const [key, value] of Object.entries(pricing)) {
        const at = `prices.${route}.${model}.${key}`
        if (!PRICE_KEYS.has(key)) throw new ReinError('CONFIG_INVALID', `${at}: unknown price; use input, output, cacheRead or cacheWrite (money per million tokens)`)
        if (typeof value !== 'number' || !Number.isFinite(value)) throw new ReinError('CONFIG_INVALID', `${at}: a price must be a finite number of money per million tokens`)
      }
    }
  }
}

/** Whether `adapter` is something the runtime can stream from (JavaScript callers are not held by the types). */
function canStream(adapter: unknown): boolean {
  if (typeof adapter !== 'object' || adapter === null) return false
  const { stream, streamBatches } = adapter as { stream?: unknown; streamBatches?: unknown }
  return typeof stream === 'function' || typeof streamBatches === 'function'
}
