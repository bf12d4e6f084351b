/**
 * Checks an agent's model routes before anything is created, and reads back the route and
 * generation options a session's log last used (a resume's defaults).
 */

import { ReinError } from '@rein/base'
import { unsupportedEffort, type LlmRuntime, type ModelRoute } from '@rein/llm'
import { eventData, type SessionEvent } from '@rein/session'
import type { AgentOptions } from './options.ts'

/**
 * Throws, before any session exists: `UNKNOWN_PROVIDER` for a route (the primary, a fallback or the summary route) no
 * loaded provider serves, `UNSUPPORTED_REASONING_EFFORT` for an effort the primary model's catalog
 * does not list, `MAX_COST_UNPRICED` when `maxCost` is set and a route's model has no pricing.
 */
export function checkRoutes(options: AgentOptions, llm: LlmRuntime): void {
  const routes = modelRoutes(options)
  const served = llm.providers()
  for (const [where, route] of routes) {
    if (!served.includes(route.provider)) {
      throw new ReinError('UNKNOWN_PROVIDER', `${where}: no loaded provider serves "${route.provider}"; loaded: ${served.length ? served.join(', ') : 'none'} (add its provider row, or pick one of those)`, { details: { where, provider: route.provider, loaded: served } })
    }
  }
  const unsupported = unsupportedEffort(options, llm.resolveModel(options.provider, options.model), options.reasoningEffort)
  if (unsupported) throw new ReinError(unsupported.code, unsupported.message)
  if (options.maxCost === undefined) return
  for (const [where, route] of routes) {
    if (!llm.pricing(route.provider, route.model)) {
      throw new ReinError('MAX_COST_UNPRICED', `maxCost is set but ${where} ${route.provider}/${route.model} has no price (neither its provider's model catalog nor prices on the @rein/llm row), so cost cannot be counted; add a price or drop maxCost`, { details: { where } })
    }
  }
}

/**
 * Every route the agent may send a request on, named as its options name it: the primary, the
 * fallbacks, and the route that writes summaries while compaction is on.
 */
export function modelRoutes(options: AgentOptions): [string, ModelRoute][] {
  const { summaryRoute } = options.compaction
  return [
    ['provider', options],
    ...options.fallbacks.map((route, index): [string, ModelRoute] => [`fallbacks[${index}]`, route]),
    ...(summaryRoute && options.compaction.mode !== 'off' ? [['compaction.summaryRoute', summaryRoute] as [string, ModelRoute]] : []),
  ]
}

/**
 * The route and generation options of the log's last step (or, for older logs, its last request
 * header). A recorded reasoning effort belongs to the recorded model: when `overrides` name another
 * provider or model, it is left out (the new model may not list it).
 */
export function recordedRequest(events: readonly SessionEvent[], overrides: Partial<ModelRoute> = {}): Partial<Pick<AgentOptions, 'provider' | 'model' | 'temperature' | 'reasoningEffort'>> {
  const step = events.findLast((event) => event.type === 'step/start' && eventData(event, 'step/start').request !== undefined)
  const request = step && eventData(step, 'step/start').request
  if (request) {
    const { provider, model, temperature, reasoningEffort } = request
    const sameModel = (overrides.provider ?? provider) === provider && (overrides.model ?? model) === model
    return {
      provider, model,
      ...(temperature !== undefined ? { temperature } : {}),
      ...(reasoningEffort !== undefined && sameModel ? { reasoningEffort } : {}),
    }
  }
  const header = events.findLast((event) => event.type === 'request/header')
  if (!header) return {}
  const { provider, model } = eventData(header, 'request/header')
  return { provider, model }
}
