/**
 * Budgets over a tree of agents: what a turn's subagents spend while it runs counts against the
 * turn's `maxSteps`, `maxOutputTokens` and `maxCost` (never in its own usage, which telemetry rolls
 * up separately), and a subagent is created with at most what its parent's turn has left.
 */

import { ReinError } from '@rein/base'
import type { TokenUsage } from '@rein/llm'
import { Tally } from './accounting.ts'
import type { AgentOptions } from './options.ts'

/** One step, or one provider attempt's usage, of a subagent, told to the run that made it. */
export type Spend = { steps: number } | { usage: TokenUsage; cost: number | undefined; estimated: boolean }

/** Tells the parent's running turn (and, through it, its own parent's) what a subagent spent. */
export type Charge = (spend: Spend) => void

/** What a running turn's subagents have spent so far. */
export class TreeSpend {
  steps = 0
  readonly tally = new Tally()

  add(spend: Spend): void {
    if ('steps' in spend) this.steps += spend.steps
    else this.tally.add(spend.usage, spend.cost, spend.estimated)
  }
}

/** The turn's own spend and its subagents', together: what budgets are checked against. */
export function spentByTree(own: Tally, tree: TreeSpend): Tally {
  return own.plus(tree.tally)
}

/** What a running turn has left of each budget it has; steps always (`maxSteps` has a default). */
export interface BudgetLeft {
  steps: number
  outputTokens?: number
  cost?: number
}

export function budgetLeft(options: AgentOptions, step: number, own: Tally, tree: TreeSpend): BudgetLeft {
  const spent = spentByTree(own, tree)
  const { maxOutputTokens, maxCost } = options
  const money = spent.cost
  return {
    steps: options.maxSteps - step - tree.steps,
    ...(maxOutputTokens === undefined ? {} : { outputTokens: maxOutputTokens - spent.usage.outputTokens }),
    ...(maxCost === undefined || money === undefined ? {} : { cost: maxCost - money }),
  }
}

/** A subagent's options within what its parent's turn has left; `BUDGET_EXHAUSTED` when nothing is. */
export function withinParent(options: AgentOptions, left: BudgetLeft | undefined): AgentOptions {
  if (!left) return options
  const exhausted = left.steps < 1 ? 'steps' : (left.outputTokens ?? 1) < 1 ? 'output tokens' : (left.cost ?? 1) <= 0 ? 'cost' : undefined
  if (exhausted) throw new ReinError('BUDGET_EXHAUSTED', `the parent's turn has no ${exhausted} left for a subagent; its budget covers its subagents too`, { details: { ...left } })
  return {
    ...options,
    maxSteps: Math.min(options.maxSteps, left.steps),
    ...(left.outputTokens === undefined ? {} : { maxOutputTokens: Math.min(options.maxOutputTokens ?? left.outputTokens, left.outputTokens) }),
    ...(left.cost === undefined ? {} : { maxCost: Math.min(options.maxCost ?? left.cost, left.cost) }),
  }
}
