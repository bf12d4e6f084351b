/**
 * The fallback chain: which failures move on to the next route, how a route is checked when it is
 * reached, and the cool-down that keeps a route that just failed over out of later streams' way.
 */

import { kindOf, messageOf } from '@rein/base'
import type { AdapterRequest, LlmAdapter, ModelInfo } from './adapter.ts'
import { isRetryable, type LlmFailure, type LlmFailureCode } from './errors.ts'
import type { ModelInfos } from './model-info.ts'
import type { LlmRequest, ModelRoute } from './request.ts'

/** Moves to the next route at once: retrying the same provider cannot help. */
const SWITCH_AT_ONCE: ReadonlySet<LlmFailureCode> = new Set(['AUTH', 'QUOTA', 'MISSING_CREDENTIAL', 'INVALID_CREDENTIAL', 'NO_ADAPTER', 'MALFORMED_RESPONSE'])
/** Another model would fail the same way. */
const SAME_EVERYWHERE: ReadonlySet<LlmFailureCode> = new Set(['INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED'])

/** Whether a route's last failure (its retries spent) sends the request on down the chain. */
export function fallsBack(failure: LlmFailure): boolean {
  return isRetryable(failure.code) || SWITCH_AT_ONCE.has(failure.code) || failure.modelNotFound === true
}

/** Whether another model would fail the same way, so the chain is not worth trying. */
export function failsEverywhere(failure: LlmFailure): boolean {
  return SAME_EVERYWHERE.has(failure.code) && failure.modelNotFound !== true
}

export type ResolvedRoute = { adapter: LlmAdapter; request: Omit<AdapterRequest, 'signal'> } | { failure: LlmFailure }

/**
 * The adapter serving `route` now and the request it gets: catalog defaults applied, the effort
 * checked, `maxTokens` held to `cap` (the caller's `maxTokensCap`, read once per attempt by
 * `capOf`; undefined when only vetting the route). Run for every attempt, so a provider swapped
 * between retries serves the next one. A failure here is the route's, never the caller's.
 */
export function resolveRoute(route: ModelRoute, adapters: ReadonlyMap<string, LlmAdapter>, request: LlmRequest, infos: ModelInfos, cap: number | undefined): ResolvedRoute {
  const adapter = adapters.get(route.provider)
  if (!adapter) {
    const known = [...adapters.keys()].sort()
    return { failure: { code: 'NO_ADAPTER', message: `no adapter serves provider "${route.provider}"; registered: ${known.length ? known.join(', ') : 'none'}` } }
  }
  const info = infos.peek(adapter, route.provider, route.model)
  const unsupported = unsupportedEffort(route, info, request.reasoningEffort)
  if (unsupported) return { failure: unsupported }
  const effort = request.reasoningEffort ?? info?.reasoning?.default
  const own = request.maxTokens ?? info?.maxTokens
  const maxTokens = cap === undefined ? own : Math.min(own ?? cap, cap)
  return {
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
  }
}

/**
 * The request's `maxTokensCap` now: a finite number of 0 or more, or undefined for none. A cap
 * that throws or gives anything else (null, NaN, a negative number, a string) is the caller's
 * failure, `ABORTED`, so `stream` still never throws and never sends `maxTokens: NaN`.
 */
export function capOf(request: LlmRequest): number | undefined | LlmFailure {
  const { maxTokensCap } = request
  let cap: unknown = maxTokensCap
  if (typeof maxTokensCap === 'function') {
    try {
      cap = maxTokensCap()
    } catch (error) {
      return { code: 'ABORTED', message: `the caller could not say how many tokens the next attempt may use (maxTokensCap threw), so it was not sent: ${messageOf(error)}` }
    }
  }
  if (cap === undefined || (typeof cap === 'number' && Number.isFinite(cap) && cap >= 0)) return cap
  const given = typeof cap === 'number' ? String(cap) : kindOf(cap)
  return { code: 'ABORTED', message: `maxTokensCap gave ${given}, not a finite number of 0 or more (or undefined for no cap), so the next attempt was not sent` }
}

/** The failure for a reasoning effort the model's catalog entry does not list; undefined when it does, or lists none. */
export function unsupportedEffort(route: ModelRoute, info: ModelInfo | undefined, effort: string | undefined): LlmFailure | undefined {
  if (effort === undefined || !info || info.reasoning?.efforts.includes(effort)) return undefined
  const listed = info.reasoning?.efforts ?? []
  return {
    code: 'UNSUPPORTED_REASONING_EFFORT',
    message: `${route.provider}/${route.model} does not support reasoning effort "${effort}"; ${listed.length ? `it supports ${listed.join(', ')}` : 'it lists no reasoning efforts'}`,
  }
}

interface Cooling {
  until: number
  failure: LlmFailure
}

/**
 * Routes that recently failed over, each with the failure that started its cool-down. While a
 * route cools down, streams whose chain has a later usable route go straight there.
 */
export class Cooldowns {
  private readonly routes = new Map<string, Cooling>()

  constructor(private readonly ms: number) {}

  start(route: ModelRoute, failure: LlmFailure): void {
    if (this.ms > 0) this.routes.set(routeKey(route), { until: Date.now() + this.ms, failure })
  }

  clear(route: ModelRoute): void {
    if (this.routes.size > 0) this.routes.delete(routeKey(route))
  }

  /** The cool-down `route` is in, if any; an expired one is forgotten. */
  active(route: ModelRoute): Cooling | undefined {
    if (this.routes.size === 0) return undefined
    const key = routeKey(route)
    const cooling = this.routes.get(key)
    if (cooling && cooling.until <= Date.now()) {
      this.routes.delete(key)
      return undefined
    }
    return cooling
  }
}

function routeKey(route: ModelRoute): string {
  return `${route.provider}\u0000${route.model}`
}

/** The chain without repeats: a route already tried is not tried again. */
export function dedupe(chain: readonly ModelRoute[]): ModelRoute[] {
  const seen = new Set<string>()
  return chain.filter((route) => {
    const key = routeKey(route)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

export function routeLabel(route: ModelRoute): string {
  return `${route.provider}/${route.model}`
}
