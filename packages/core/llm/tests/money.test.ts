// Money without floating-point noise: what one attempt costs, read as a person writes it.
import { describe, expect, it } from 'vitest'
import { costOfUsage } from '../src/index.ts'

describe('money', () => {
  it('an attempt of 1142 input tokens at 0.1 and 5 output at 0.2 costs 0.0001152, not 0.00011520000000000001', () => {
    expect(costOfUsage({ input: 0.1, output: 0.2 }, { inputTokens: 1142, outputTokens: 5 })).toBe(0.0001152)
    expect(costOfUsage({ input: 0.1, output: 0.2 }, { inputTokens: 3, outputTokens: 0 })).toBe(0.0000003)
    expect(costOfUsage({ input: 0.27, output: 1.1, cacheRead: 0.07 }, { inputTokens: 7, outputTokens: 0, cacheReadTokens: 7 })).toBe(0.00000238)
  })

  it('keeps every digit a real price gives, large and small', () => {
    expect(costOfUsage({ input: 2.5, output: 10 }, { inputTokens: 1_234_567, outputTokens: 89_012 })).toBe(3.9765375)
  })
})
