/** Token accounting. The counts are disjoint, so they add up without double counting. */

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

/** Sums usages field by field; optional fields stay absent when absent in every operand. */
export function addUsage(...usages: readonly TokenUsage[]): TokenUsage {
  const total: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  for (const usage of usages) {
    total.inputTokens += usage.inputTokens
    total.outputTokens += usage.outputTokens
    for (const key of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
      if (usage[key] !== undefined) total[key] = (total[key] ?? 0) + usage[key]
    }
  }
  return total
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

export function costOfUsage(pricing: Pricing, usage: TokenUsage): number {
  const million = 1_000_000
  return (
    usage.inputTokens * pricing.input
    + (usage.cacheReadTokens ?? 0) * (pricing.cacheRead ?? pricing.input)
    + (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input)
    + usage.outputTokens * pricing.output
  ) / million
}
