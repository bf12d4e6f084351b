/** The `ctx.llm` service: adapter routes, model metadata, and one `stream` with retry and fallback. */

import { Context, Service, type Logger } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { MAX_TIMER_MS, ReinError, Stop, eventSender, type EventSender } from '@rein/base'
import type { LlmAdapter, ModelInfo, ProviderEndpoint } from './adapter.ts'
import { Attempt, attemptReads, CANCELLED, InflightAttempts, STOPPED } from './attempt.ts'
import { aborted, Course } from './course.ts'
import { Cooldowns, dedupe, resolveRoute } from './fallback.ts'
import { ModelInfos } from './model-info.ts'
import type { LlmEvent, LlmRequest } from './request.ts'
import { requestShapeProblem, routesProblem } from './request-shape.ts'
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.ts'
import type { StreamChunk } from './stream.ts'
import { costOfUsage, isPrice, MAX_PRICE, type Pricing, type TokenUsage } from './usage.ts'

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

/** A model's prices in a config (Config `prices`, a provider's `models`): money per million tokens, 0 to `MAX_PRICE`. */
export const PricingSchema: Schema<Pricing> = Schema.object({
  input: Schema.number().min(0).max(MAX_PRICE).required().description('Input read at the full price, per million tokens.'),
  output: Schema.number().min(0).max(MAX_PRICE).required().description('Output, reasoning included, per million tokens.'),
  cacheRead: Schema.number().min(0).max(MAX_PRICE).description('Input served from the prompt cache. Default: input.'),
  cacheWrite: Schema.number().min(0).max(MAX_PRICE).description('Input written to the prompt cache. Default: input.'),
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
    prices: Schema.dict(Schema.dict(PricingSchema)).default({}).description('Prices by route, then model, replacing the catalogs\' (money per million tokens).'),
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
        // Two provider rows left on one default route (`openai`) is the common way here: say the row's option.
        const advice = `give this one another route (a provider row's provider option, e.g. provider: ${taken[0]}2), or remove or dispose the other`
        throw new ReinError('DUPLICATE_ADAPTER', `provider route ${taken.map((route) => `"${route}"`).join(', ')} is already served by another adapter: ${advice}`, { details: { routes: taken } })
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
    const begun = await this.begin(request)
    if (begun.kind === 'end') {
      yield begun.chunks
      return
    }
    const { course, release } = begun
    // One generator for the whole chain: the course says what comes next between attempts, and each
    // attempt's reads are yielded from here, so a batch costs the caller one hop, not one per level.
    try {
      while (true) {
        const step = await course.next()
        if (step.kind === 'end') {
          yield step.chunks
          return
        }
        if (step.discard) yield DISCARDED
        const failed = yield* attemptReads(new Attempt(step.adapter, step.request, step.context))
        if (failed === undefined) {
          course.answered()
          return
        }
        const ending = await course.failed(failed)
        if (ending?.kind === 'end') {
          yield ending.chunks
          return
        }
      }
    } finally {
      release()
    }
  }

  /**
   * What a stream checks and sets up before its first attempt: the request's shape, the catalogs'
   * answers, the primary route; then its course, stopped with the caller's signal or the service.
   * Ends at once, with the chunks to send, when the stream cannot start.
   */
  private async begin(request: LlmRequest): Promise<{ kind: 'end'; chunks: readonly StreamChunk[] } | { kind: 'course'; course: Course; release: () => void }> {
    const state = this._state
    if (state.stopped) return { kind: 'end', chunks: [aborted(STOPPED)] }
    const wrong = requestShapeProblem(request)
    if (wrong) return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure: { code: 'INVALID_REQUEST', message: wrong } }] }
    const chain = dedupe([{ provider: request.provider, model: request.model }, ...(request.fallbacks ?? [])])
    // Adapters that look their catalog up answer here once; every later check reads the answer.
    await Promise.all(chain.map((route) => this.modelInfo(route.provider, route.model, request.signal)))
    // Stopped while the catalog answered: nothing may be sent after dispose.
    if (state.stopped) return { kind: 'end', chunks: [aborted(STOPPED)] }
    // Only the primary must be usable up front; a broken fallback entry is skipped when reached.
    // The cap is read by the course, once per attempt.
    const primary = resolveRoute(chain[0]!, state.adapters, request, state.infos, undefined)
    if ('failure' in primary) return { kind: 'end', chunks: [{ type: 'finish', reason: 'error', failure: primary.failure }] }
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
    const release = () => {
      state.runs.delete(run)
      caller?.removeEventListener('abort', cancel)
    }
    return { kind: 'course', course: new Course(state, chain, request, run, report), release }
  }
}

const DISCARDED: readonly StreamChunk[] = Object.freeze([Object.freeze({ type: 'discard' as const })])

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

/** What the schema lets through but no price may be: a key it does not know, a number that is not finite or above `MAX_PRICE`. */
function checkPrices(prices: PriceOverrides): void {
  for (const [route, models] of Object.entries(prices)) {
    for (const [model, pricing] of Object.entries(models)) {
      for (const [key, value] of Object.entries(pricing)) {
        const at = `prices.${route}.${model}.${key}`
        if (!PRICE_KEYS.has(key)) throw new ReinError('CONFIG_INVALID', `${at}: unknown price; use input, output, cacheRead or cacheWrite (money per million tokens)`)
        if (!isPrice(value)) throw new ReinError('CONFIG_INVALID', `${at}: a price must be a finite number of money per million tokens, at most ${MAX_PRICE}`)
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
