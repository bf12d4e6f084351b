import { describe, expect, it } from 'vitest'
import { groupDigits } from '../src/index.ts'

describe('groupDigits', () => {
  it('writes numbers as toLocaleString("en-US") does for counts', () => {
    for (const value of [0, 7, 999, 1000, 12_345, 1_234_567, -1_234_567, 1_000_000_000_000, 12_345.5, Number.MAX_SAFE_INTEGER]) {
      expect(groupDigits(value)).toBe(value.toLocaleString('en-US', { maximumFractionDigits: 20 }))
    }
  })

  it('leaves what is not a finite number as String does', () => {
    expect(groupDigits(Number.NaN)).toBe('NaN')
    expect(groupDigits(Number.POSITIVE_INFINITY)).toBe('Infinity')
  })
})
