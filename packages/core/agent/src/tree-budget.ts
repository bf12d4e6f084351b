/**
 * Budgets over a tree of agents: what a turn's subagents spend while it runs counts against the
 * turn's `maxSteps`, `maxOutputTokens` and `maxCost` (never in its own usage, which telemetry rolls
 * up separately), and a subagent is created with at most what its parent's turn has left.
 */

import { ReinError } from '@rein/base'
import type { TokenUsage } from '@rein/llm'
import { Tally } from './accounting.ts'
import { newRunId } from './identity.ts'
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

  /** Whether any step or attempt was told. */
  get any(): boolean {
    return this.steps > 0 || this.tally.counted > 0
  }
}

/**
 * An agent's next run, named before it starts: a repair that continues the agent's subagents (a
 * resume's, or the next turn's after an interrupt) does it for this run. What they spend meanwhile
 * is in the run's `subagents` and goes on up the tree, but not against the run's budgets: they
 * were spent before it began. They are held to what a live ancestor's running turn has left (`left`).
 */
export class NextRun {
  readonly runId = newRunId()
  readonly spent = new TreeSpend()
  /** When the first repair working for it began: its start if no turn takes it. */
  readonly startedAt = Date.now()
  /** When the last repair working for it ended: its end if no turn takes it. */
  endedAt: number | undefined
  /** What the last repair working for it threw, if it failed (told with the run if no turn takes it). */
  failed: { error: unknown } | undefined
  /** A continued child was given it as its parent run: telemetry heard of it, so it is told even if nothing was spent. */
  named = false

  constructor(private readonly upward: Charge | undefined, readonly left: (() => BudgetLeft | undefined) | undefined) {}

  readonly charge: Charge = (spend) => {
    this.spent.add(spend)
    this.upward?.(spend)
  }
}

/** The turn's own spend and its subagents', together: what budgets are checked against. */
export function spentByTree(own: Tally, tree: TreeSpend): Tally {
  // Without subagents (the common case, twice a step) nothing is added, so nothing is allocated.
  return tree.tally.counted === 0 ? own : own.plus(tree.tally)
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

/** The tighter of two budget remainders: a subagent's own, and what its parent's turn (and above) has left. */
export function tighter(own: BudgetLeft, above: BudgetLeft | undefined): BudgetLeft {
  if (!above) return own
  const least = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b))
  const outputTokens = least(own.outputTokens, above.outputTokens)
  const cost = least(own.cost, above.cost)
  return { steps: Math.min(own.steps, above.steps), ...(outputTokens === undefined ? {} : { outputTokens }), ...(cost === undefined ? {} : { cost }) }
}

/**
 * Why a subagent's turn must stop because its parent's turn (or one above it) has nothing left —
 * siblings running at once share what the parent had — or undefined.
 */
export function parentSpent(above: BudgetLeft | undefined): { code: string; message: string } | undefined {
  if (!above) return undefined
  if (above.steps < 1) return { code: 'MAX_STEPS', message: 'the parent\'s turn has no requests left for its subagents' }
  if (above.outputTokens !== undefined && above.outputTokens < 1) return { code: 'MAX_OUTPUT_TOKENS', message: 'the parent\'s turn has no output tokens left for its subagents' }
  if (above.cost !== undefined && above.cost <= 0) return { code: 'MAX_COST', message: 'the parent\'s turn has no money left for its subagents' }
  return undefined
}

/** A subagent's options within what its parent's turn has left; `BUDGET_EXHAUSTED` when nothing is. */
export function withinParent(options: AgentOptions, left: BudgetLeft | undefined): AgentOptions {
  if (!left) return options
  const spent = parentSpent(left)
  if (spent) throw new ReinError('BUDGET_EXHAUSTED', `${spent.message}: its budget covers its subagents too`, { details: { ...left } })
  return {
    ...options,
    maxSteps: Math.min(options.maxSteps, left.steps),
    ...(left.outputTokens === undefined ? {} : { maxOutputTokens: Math.min(options.maxOutputTokens ?? left.outputTokens, left.outputTokens) }),
    ...(left.cost === undefined ? {} : { maxCost: Math.min(options.maxCost ?? left.cost, left.cost) }),
  }
}
