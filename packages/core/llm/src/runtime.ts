/** The `ctx.llm` service: adapter routes, model metadata, and one `stream` with retry and fallback. */

import { Context, Service, type Logger } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { ReinError } from '@rein/base'
import type { AdapterRequest, LlmAdapter, ModelInfo } from './adapter.ts'
import { isRetryable, toFailure, type LlmFailure, type LlmFailureCode } from './errors.ts'
import type { LlmEvent, LlmRequest, ModelRoute } from './request.ts'
import { DEFAULT_RETRY_POLICY, retryDelay, sleep, type RetryPolicy } from './retry.ts'
import { carriesAnswer, EMPTY_RESPONSE, isDelta, type StreamChunk } from './stream.ts'
import { costOfUsage, type TokenUsage } from './usage.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    llm: LlmRuntime
  }
  interface Events {
    'llm/retry'(event: Extract<LlmEvent, { type: 'retry' }>): void
    'llm/fallback'(event: Extract<LlmEvent, { type: 'fallback' }>): void
    'llm/attempt'(event: Extract<LlmEvent, { type: 'attempt' }>): void
  }
}

export interface LlmRuntimeConfig {
  retry: RetryPolicy
}

type Attempt = { ok: true } | { ok: false; failure: LlmFailure; shown: boolean }

interface RuntimeState {
  adapters: Map<string, LlmAdapter>
  retry: RetryPolicy
  logger: Logger
}

/** Fallback switches to the next route at once on these, since retrying the same provider cannot help. */
const SWITCH_AT_ONCE: ReadonlySet<LlmFailureCode> = new Set(['AUTH', 'QUOTA', 'MISSING_CREDENTIAL', 'INVALID_CREDENTIAL'])
/** Another model would fail the same way. */
const SAME_EVERYWHERE: ReadonlySet<LlmFailureCode> = new Set(['INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED'])
const NEVER_ABORTED = new AbortController().signal

export class LlmRuntime extends Service {
  static readonly Config: Schema<{ retry?: Partial<RetryPolicy> }, LlmRuntimeConfig> = Schema.object({
    retry: Schema.object({
      maxRetries: Schema.natural().default(DEFAULT_RETRY_POLICY.maxRetries).description('Retries per route after the first attempt.'),
      initialDelayMs: Schema.natural().default(DEFAULT_RETRY_POLICY.initialDelayMs).description('First backoff delay.'),
      maxDelayMs: Schema.natural().default(DEFAULT_RETRY_POLICY.maxDelayMs).description('Longest backoff delay.'),
      jitter: Schema.number().min(0).max(1).default(DEFAULT_RETRY_POLICY.jitter).description('Random ± fraction of each delay.'),
      retryAfterCapMs: Schema.natural().default(DEFAULT_RETRY_POLICY.retryAfterCapMs).description('Longest Retry-After honoured.'),
    }).default({} as RetryPolicy),
  }) as Schema<{ retry?: Partial<RetryPolicy> }, LlmRuntimeConfig>

  // Service methods run on cordis's tracing proxy; state lives in one object read once per call.
  private _state: RuntimeState

  constructor(ctx: Context, public config: LlmRuntimeConfig) {
    super(ctx, 'llm')
    this._state = { adapters: new Map(), retry: config.retry, logger: ctx.logger('llm') }
  }

  /**
   * Serves `routes` (provider ids such as `openai` or `deepseek`) with `adapter` until the returned
   * disposer runs or the calling plugin is disposed. All or nothing: one taken route → `DUPLICATE_ADAPTER`.
   * Streams already running on a replaced adapter finish on it.
   */
  registerAdapter(routes: string | readonly string[], adapter: LlmAdapter): () => Promise<void> {
    const list = typeof routes === 'string' ? [routes] : [...routes]
    if (list.length === 0) throw new ReinError('INVALID_ROUTE', 'registerAdapter needs at least one route')
    const { adapters } = this._state
    return this.ctx.effect(() => {
      const taken = list.filter((route) => adapters.has(route))
      if (taken.length > 0) {
        throw new ReinError('DUPLICATE_ADAPTER', `provider route ${taken.map((route) => `"${route}"`).join(', ')} is already served by another adapter; dispose it first`)
      }
      for (const route of list) adapters.set(route, adapter)
      return () => {
        for (const route of list) if (adapters.get(route) === adapter) adapters.delete(route)
      }
    }, `llm.registerAdapter(${list.join(', ')})`)
  }

  /** Registered provider routes, sorted. */
  providers(): string[] {
    return [...this._state.adapters.keys()].sort()
  }

  resolveModel(provider: string, model: string): ModelInfo | undefined {
    return this._state.adapters.get(provider)?.resolveModel?.(provider, model)
  }

  listModels(provider: string): readonly ModelInfo[] {
    return this._state.adapters.get(provider)?.listModels?.(provider) ?? []
  }

  /** Cost of `usage` in the catalog's currency; undefined when the model has no pricing. */
  costOf(provider: string, model: string, usage: TokenUsage): number | undefined {
    const pricing = this.resolveModel(provider, model)?.pricing
    return pricing ? costOfUsage(pricing, usage) : undefined
  }

  /**
   * Streams one answer. Never throws: every failure ends the stream with `finish {reason: 'error'}`
   * (or `'aborted'`) carrying an `LlmFailure`. Failures before anything was shown are retried and
   * then sent down `fallbacks`; once a delta was shown, the stream ends with the failure instead.
   */
  async *stream(request: LlmRequest): AsyncGenerator<StreamChunk, void, undefined> {
    const { adapters, retry: policy, logger } = this._state
    const signal = request.signal ?? NEVER_ABORTED
    const chain = dedupe([{ provider: request.provider, model: request.model }, ...(request.fallbacks ?? [])])
    const planned = plan(chain, adapters, request)
    if ('failure' in planned) {
      yield { type: 'finish', reason: 'error', failure: planned.failure }
      return
    }
    const report = (event: LlmEvent) => {
      try {
        request.onEvent?.(event)
      } catch (error) {
        logger.error('an llm onEvent callback failed: %s', error)
      }
      this.ctx.parallel(`llm/${event.type}`, event as never).catch((error: unknown) => logger.error('an llm/%s listener failed: %s', event.type, error))
    }

    for (let index = 0; index < planned.steps.length; index++) {
      const step = planned.steps[index]!
      let failure: LlmFailure | undefined
      for (let retry = 0; ; retry++) {
        const attempt = yield* this.attempt(step.adapter, { ...step.request, signal })
        if (attempt.ok) return
        if (signal.aborted) {
          yield aborted()
          return
        }
        if (attempt.shown) {
          yield { type: 'finish', reason: 'error', failure: attempt.failure }
          return
        }
        failure = attempt.failure
        if (!isRetryable(failure.code) || retry >= policy.maxRetries) break
        const delayMs = retryDelay(policy, retry, failure)
        report({ type: 'retry', provider: step.route.provider, model: step.route.model, attempt: retry + 1, delayMs, failure })
        try {
          await sleep(delayMs, signal)
        } catch {
          yield aborted()
          return
        }
      }
      const next = planned.steps[index + 1]
      if (next && (isRetryable(failure.code) || SWITCH_AT_ONCE.has(failure.code))) {
        report({ type: 'fallback', from: step.route, to: next.route, failure })
        continue
      }
      if (planned.steps.length > 1 && SAME_EVERYWHERE.has(failure.code)) {
        failure = { ...failure, message: `${failure.message} (not sent to a fallback model: another model would fail the same way)` }
      }
      yield { type: 'finish', reason: 'error', failure }
      return
    }
  }

  /** One attempt. Chunks are held back until the first delta, so a failed attempt shows nothing. */
  private async *attempt(adapter: LlmAdapter, request: AdapterRequest): AsyncGenerator<StreamChunk, Attempt, undefined> {
    const controller = new AbortController()
    const signal = AbortSignal.any([request.signal, controller.signal])
    let held: StreamChunk[] = []
    let shown = false
    let answered = false
    try {
      for await (const chunk of untilAborted(adapter.stream({ ...request, signal }), request.signal)) {
        if (chunk.type === 'finish') {
          if (chunk.reason === 'error' || chunk.reason === 'aborted') {
            return { ok: false, failure: chunk.failure ?? { code: 'TRANSPORT', message: 'the provider ended the stream with an error' }, shown }
          }
          if (chunk.reason === 'stop' && !answered) return { ok: false, failure: { ...EMPTY_RESPONSE }, shown }
          yield* held
          yield chunk
          return { ok: true }
        }
        answered ||= carriesAnswer(chunk)
        if (!shown && !isDelta(chunk)) {
          held.push(chunk)
          continue
        }
        if (!shown) {
          shown = true
          yield* held
          held = []
        }
        yield chunk
      }
      return { ok: false, failure: { code: 'STREAM_CLOSED', message: 'the stream ended without a finish' }, shown }
    } catch (error) {
      if (request.signal.aborted) return { ok: false, failure: { code: 'ABORTED', message: 'the request was cancelled' }, shown }
      return { ok: false, failure: toFailure(error), shown }
    } finally {
      // Stops the adapter's request when the consumer stops early or the attempt failed.
      controller.abort()
    }
  }
}

interface PlannedStep {
  route: ModelRoute
  adapter: LlmAdapter
  request: Omit<AdapterRequest, 'signal'>
}

/** Checks every route before any I/O: each needs an adapter, and a reasoning effort its model lists. */
function plan(chain: ModelRoute[], adapters: Map<string, LlmAdapter>, request: LlmRequest): { steps: PlannedStep[] } | { failure: LlmFailure } {
  const steps: PlannedStep[] = []
  for (const route of chain) {
    const adapter = adapters.get(route.provider)
    if (!adapter) {
      const known = [...adapters.keys()].sort()
      return { failure: { code: 'NO_ADAPTER', message: `no adapter serves provider "${route.provider}"; registered: ${known.length ? known.join(', ') : 'none'}` } }
    }
    const info = adapter.resolveModel?.(route.provider, route.model)
    const effort = request.reasoningEffort ?? info?.reasoning?.default
    if (request.reasoningEffort !== undefined && info && !info.reasoning?.efforts.includes(request.reasoningEffort)) {
      const listed = info.reasoning?.efforts ?? []
      return {
        failure: {
          code: 'UNSUPPORTED_REASONING_EFFORT',
          message: `${route.provider}/${route.model} does not support reasoning effort "${request.reasoningEffort}"; ${listed.length ? `it supports ${listed.join(', ')}` : 'it lists no reasoning efforts'}`,
        },
      }
    }
    const maxTokens = request.maxTokens ?? info?.maxTokens
    steps.push({
      route,
      adapter,
      request: {
        provider: route.provider,
        model: route.model,
        messages: request.messages,
        ...(request.system !== undefined ? { system: request.system } : {}),
        ...(request.tools !== undefined ? { tools: request.tools } : {}),
        ...(maxTokens !== undefined ? { maxTokens } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(effort !== undefined ? { reasoningEffort: effort } : {}),
      },
    })
  }
  return { steps }
}

function dedupe(chain: ModelRoute[]): ModelRoute[] {
  const seen = new Set<string>()
  return chain.filter((route) => {
    const key = `${route.provider}\u0000${route.model}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function aborted(): StreamChunk {
  return { type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } }
}

/**
 * Iterates `source` but stops waiting the moment `signal` aborts (throwing its reason), so an
 * adapter that ignores its signal cannot hold a cancelled call open.
 */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]()
  let onAbort!: () => void
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  try {
    while (true) {
      const next = await Promise.race([iterator.next(), aborted])
      if (next.done) return
      yield next.value
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    // Tell the adapter we are done; don't wait for one that ignores it.
    void Promise.resolve(iterator.return?.()).catch(() => {})
  }
}
