/** Token accounting. The counts are disjoint, so they add up without double counting. */

import { roundMoney } from '@rein/base'

/**
 * - `inputTokens`: input read at the full price — *excluding* cached tokens;
 * - `cacheReadTokens`: input served from the provider's prompt cache;
 * - `cacheWriteTokens`: input written to the cache (providers that bill it separately);
 * - `outputTokens`: everything generated, reasoning included;
 * - `reasoningTokens`: the reasoning share of `outputTokens` — informational, never added again.
 *
 * Total input is `inputTokens + cacheReadTokens + cacheWriteTokens`.
 */
export interface TokenUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

const OPTIONAL_COUNTS = ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const

/**
 * An adapter's usage report as the runtime keeps it, or undefined when it is no usage: a count that
 * is negative, not a number up to `Number.MAX_SAFE_INTEGER`, or (input, output) missing. An attempt without one is estimated,
 * as when the provider says nothing; a log must never hold a count it would refuse. A fraction is
 * rounded. Reasoning above output means the provider counted output without it: they are added.
 */
export function checkedUsage(reported: unknown): TokenUsage | undefined {
  if (typeof reported !== 'object' || reported === null) return undefined
  const raw = reported as Record<string, unknown>
  // Above MAX_SAFE_INTEGER a count is no count of tokens, and its cost could pass what money sums hold.
  const count = (value: unknown) => (typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? Math.round(value) : undefined)
  const inputTokens = count(raw.inputTokens)
  const outputTokens = count(raw.outputTokens)
  if (inputTokens === undefined || outputTokens === undefined) return undefined
  const usage: TokenUsage = { inputTokens, outputTokens }
  for (const key of OPTIONAL_COUNTS) {
    // A provider's null (a count it does not give) is the count absent, not a bad report.
    if (raw[key] === undefined || raw[key] === null) continue
    const value = count(raw[key])
    if (value === undefined) return undefined
    usage[key] = value
  }
  if (usage.reasoningTokens !== undefined && usage.reasoningTokens > usage.outputTokens) usage.outputTokens += usage.reasoningTokens
  return usage
}

/** Sums usages field by field; optional fields stay absent when absent in every operand. */
export function addUsage(...usages: readonly TokenUsage[]): TokenUsage {
  const total: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens
    total.outputTokens += usage.outputTokens
    for (const key of OPTIONAL_COUNTS) {
      if (usage[key] !== undefined) total[key] = (total[key] ?? 0) + usage[key]
    }
  }
  return total
}

/**
 * The highest price per million tokens rein takes, in any currency: far above any model's, and low
 * enough that a cost at it stays a finite number (1e308 would not, and a log cannot hold Infinity).
 */
export const MAX_PRICE = 1_000_000_000

/** Whether `value` can be a price: a finite number from 0 to `MAX_PRICE`. */
export function isPrice(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PRICE
}

/** Money per million tokens, in whatever currency the catalog uses. */
export interface Pricing {
  input: number
  output: number
  /** Default: `input`. */
  cacheRead?: number
  /** Default: `input`. */
  cacheWrite?: number
}

/** Money for `usage` at `pricing` (per million tokens); cache reads and writes default to the input price. */
export function costOfUsage(pricing: Pricing, usage: TokenUsage): number {
  const million = 1_000_000
  return roundMoney((
    usage.inputTokens * pricing.input
    + (usage.cacheReadTokens ?? 0) * (pricing.cacheRead ?? pricing.input)
    + (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input)
    + usage.outputTokens * pricing.output
  ) / million)
}
