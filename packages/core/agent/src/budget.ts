/**
 * The turn's limits: what a step may still ask for (each request's output limit capped by the
 * output budget the turn has left) and whether the turn has used up a budget.
 */

import type { LlmRuntime, ModelRoute } from '@rein/llm'
import type { StepRequest, TurnOverrun } from '@rein/session'
import type { Tally } from './accounting.ts'
import type { AgentOptions } from './options.ts'

export interface PlannedRequest {
  /** The options as the primary route sends them (what `step/start` records). */
  request: StepRequest
  /** What the turn's output budget has left: a ceiling on every route's `maxTokens`. */
  cap?: number
}

/**
 * The generation options of the next request. Only an explicit `maxTokens` and the budget's cap
 * go to the runtime, which applies each route's own catalog limit under the cap — so a fallback
 * model gets its own limit, not the primary's.
 */
export function planRequest(options: AgentOptions, llm: LlmRuntime, spent: Tally): PlannedRequest {
  const { provider, model, temperature, reasoningEffort, maxOutputTokens } = options
  const cap = maxOutputTokens === undefined ? undefined : Math.max(1, maxOutputTokens - spent.usage.outputTokens)
  const own = ownLimit(options, llm, options)
  const maxTokens = cap === undefined ? own : Math.min(own ?? cap, cap)
  return {
    request: {
      provider,
      model,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
    },
    ...(cap !== undefined ? { cap } : {}),
  }
}

/** A route's own output limit per request: the agent's `maxTokens`, else the route's catalog value. */
export function ownLimit(options: AgentOptions, llm: LlmRuntime, route: ModelRoute): number | undefined {
  return options.maxTokens ?? llm.resolveModel(route.provider, route.model)?.maxTokens
}

/** The budget the turn has used up, if any. With `maxCost`, money that cannot be counted counts as used up. */
export function overBudget(options: AgentOptions, spent: Tally): TurnOverrun | undefined {
  const { maxOutputTokens, maxCost } = options
  const { usage } = spent
  if (maxOutputTokens !== undefined && usage.outputTokens >= maxOutputTokens) {
    return { code: 'MAX_OUTPUT_TOKENS', message: `the turn used ${usage.outputTokens} output tokens, its limit is ${maxOutputTokens}` }
  }
  if (maxCost === undefined) return undefined
  if (spent.unpriced) {
    return { code: 'MAX_COST_UNPRICED', message: `the turn's cost cannot be counted (a model it used has no pricing), so maxCost ${maxCost} cannot be kept` }
  }
  const cost = spent.cost
  if (cost !== undefined && cost >= maxCost) return { code: 'MAX_COST', message: `the turn cost ${cost.toFixed(4)}, its limit is ${maxCost}` }
  return undefined
}
