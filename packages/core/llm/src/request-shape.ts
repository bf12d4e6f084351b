/**
 * What is wrong with a request or a registration from a caller the types did not hold (plain
 * JavaScript, a value built at run time), said before anything reads it: a stream ends with
 * `INVALID_REQUEST` instead of throwing a TypeError from deep inside the runtime.
 */

import { kindOf } from '@rein/base'

/** An object with `provider` and `model` strings: what the runtime can look a route up by (an unusable one fails there, by name). */
const isRoute = (value: unknown): boolean => {
  if (typeof value !== 'object' || value === null) return false
  const { provider, model } = value as { provider?: unknown; model?: unknown }
  return typeof provider === 'string' && typeof model === 'string'
}

/**
 * What is wrong with `request`'s shape, if anything: its route, its messages, its fallbacks. A
 * fallback route that is a route but serves nothing (an empty model, say) is no shape problem: the
 * chain skips it when it gets there, and it never takes the primary down.
 */
export function requestShapeProblem(request: unknown): string | undefined {
  if (typeof request !== 'object' || request === null) return `the request must be an object with provider, model and messages, not ${kindOf(request)}`
  const { messages, fallbacks } = request as { messages?: unknown; fallbacks?: unknown }
  if (!isRoute(request)) return 'the request needs provider and model, each a string'
  if (!Array.isArray(messages)) return 'the request needs messages, an array'
  if (fallbacks !== undefined && (!Array.isArray(fallbacks) || !fallbacks.every(isRoute))) return 'the request\'s fallbacks must be an array of {provider, model}, each a string'
  return undefined
}

/** What is wrong with `routes`, if anything: a route is a non-empty string without spaces around it. */
export function routesProblem(routes: unknown): string | undefined {
  const list: unknown[] = typeof routes === 'string' ? [routes] : Array.isArray(routes) ? routes : []
  if (list.length === 0) return 'registerAdapter needs at least one route'
  const bad = list.find((route) => typeof route !== 'string' || route === '' || route.trim() !== route)
  if (bad === undefined) return undefined
  return `registerAdapter takes provider routes as non-empty strings without spaces around them, not ${typeof bad === 'string' ? JSON.stringify(bad) : kindOf(bad)}`
}
