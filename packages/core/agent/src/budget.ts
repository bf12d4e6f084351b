/**
 * The turn's limits: what a step may still ask for (`maxTokens` capped by the output budget the
 * turn has left) and whether the turn has used up a budget.
 */

import type { LlmRuntime } from '@rein/llm'
import type { StepRequest, TurnOverrun } from '@rein/session'
import type { Tally } from './accounting.ts'
import type { AgentOptions } from './options.ts'

export interface PlannedRequest {
  request: StepRequest
  /** `maxTokens` is what the turn's output budget had left, below the request's own limit. */
  budgetCapped: boolean
}

/** The generation options of the next request: the agent's, with `maxTokens` = min(its own or the catalog's, what the turn has left). */
export function planRequest(options: AgentOptions, llm: LlmRuntime, spent: Tally): PlannedRequest {
  const { provider, model, temperature, reasoningEffort, maxOutputTokens } = options
  const own = options.maxTokens ?? llm.resolveModel(provider, model)?.maxTokens
  const left = maxOutputTokens === undefined ? undefined : Math.max(1, maxOutputTokens - spent.usage.outputTokens)
  const budgetCapped = left !== undefined && (own === undefined || left < own)
  const maxTokens = budgetCapped ? left : own
  return {
    request: {
      provider,
      model,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(reasoningEffort !== undefined ? { reasoningEffort } : {}),
    },
    budgetCapped,
  }
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
