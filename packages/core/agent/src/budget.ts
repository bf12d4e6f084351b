/**
 * The turn's limits: what a step may still ask for (each request's output limit capped by the
 * output budget the turn has left, and for a subagent by what its parent's turn has left) and
 * whether the turn has used up a budget.
 */

import { formatMoney, plainNumber } from '@rein/base'
import type { LlmRuntime, ModelRoute } from '@rein/llm'
import type { StepRequest, TurnOverrun } from '@rein/session'
import type { Tally } from './accounting.ts'
import type { AgentOptions } from './options.ts'
import type { BudgetLeft } from './tree-budget.ts'

export interface PlannedRequest {
  /** The options as the primary route sends them (what `step/start` records). */
  request: StepRequest
  /** What the output budgets have left: a ceiling on every route's `maxTokens`. */
  cap?: number
  /** The cap is what the parent's turn has left, less than this turn's own budget has. */
  capByParent?: true
}

/**
 * The generation options of the next request. Only an explicit `maxTokens` and the budgets' cap
 * go to the runtime, which applies each route's own catalog limit under the cap — so a fallback
 * model gets its own limit, not the primary's. `above` is what a subagent's parent's turn has left
 * now: siblings spend it too, so the child's own budget (set when it was made) may exceed it.
 */
export function planRequest(options: AgentOptions, llm: LlmRuntime, spent: Tally, above?: BudgetLeft): PlannedRequest {
  const { provider, model, temperature, reasoningEffort } = options
  const { cap, capByParent } = outputCap(options, spent, above)
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
    ...(capByParent ? { capByParent: true as const } : {}),
  }
}

/** A ceiling on an attempt's output from the budgets, and whether the parent's turn set it. */
export interface OutputCap {
  cap?: number
  capByParent: boolean
}

/** What the output budgets have left for the next attempt (the turn's own, or its parent's when that is less). */
export function outputCap(options: Pick<AgentOptions, 'maxOutputTokens'>, spent: Tally, above?: BudgetLeft): OutputCap {
  const { maxOutputTokens } = options
  const ownCap = maxOutputTokens === undefined ? undefined : Math.max(1, maxOutputTokens - spent.usage.outputTokens)
  const parentCap = above?.outputTokens === undefined ? undefined : Math.max(1, above.outputTokens)
  const capByParent = parentCap !== undefined && (ownCap === undefined || parentCap < ownCap)
  const cap = capByParent ? parentCap : ownCap
  return { ...(cap !== undefined ? { cap } : {}), capByParent }
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
    return { code: 'MAX_COST_UNPRICED', message: `the turn's cost cannot be counted (a model it used has no pricing), so maxCost ${plainNumber(maxCost)} cannot be kept` }
  }
  const cost = spent.cost
  if (cost !== undefined && cost >= maxCost) return { code: 'MAX_COST', message: `the turn cost ${costReaching(cost, maxCost)}, its limit is ${plainNumber(maxCost)}` }
  return undefined
}

/** `cost`, which reached `limit`, written with the digits that show it did: rounding must not make it look below. */
function costReaching(cost: number, limit: number): string {
  // A cost over the limit must read as over it: 0.00132 against 0.0013, not 0.0013.
  const reaches = (value: number) => (cost > limit ? value > limit : value >= limit)
  const shown = formatMoney(cost)
  if (reaches(Number(shown))) return shown
  for (let digits = 3; digits <= 17; digits++) {
    const value = Number(cost.toPrecision(digits))
    if (reaches(value)) return plainNumber(value)
  }
  return plainNumber(cost)
}
