import { describe, expect, it } from 'vitest'
import { addMoney, counted, formatMoney, groupDigits, plainNumber } from '../src/index.ts'

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

describe('formatMoney', () => {
  it('never writes a small amount in exponent form (0.0000001 was 1.0e-7)', () => {
    expect(formatMoney(0.0000001)).toBe('0.00000010')
    expect(formatMoney(0.00000012345)).toBe('0.00000012')
    expect(formatMoney(1e-12)).toBe('0.0000000000010')
    for (let exponent = -30; exponent < -2; exponent++) expect(formatMoney(3 * 10 ** exponent)).not.toMatch(/e/)
  })

  it('keeps two significant digits below a cent and four decimals from a cent up', () => {
    expect(formatMoney(0.0023)).toBe('0.0023')
    expect(formatMoney(0.00015)).toBe('0.00015')
    expect(formatMoney(0.01)).toBe('0.0100')
    expect(formatMoney(1.23456)).toBe('1.2346')
    expect(formatMoney(0)).toBe('0')
    expect(formatMoney(-0.0000005)).toBe('-0.00000050')
  })
})

describe('plainNumber', () => {
  it('writes a number as String does, but never in exponent form', () => {
    expect(plainNumber(0.0000001)).toBe('0.0000001')
    expect(plainNumber(0.00000012345)).toBe('0.00000012345')
    expect(plainNumber(-1.5e-9)).toBe('-0.0000000015')
    expect(plainNumber(1.5e21)).toBe('1500000000000000000000')
    expect(plainNumber(0.00125)).toBe('0.00125')
    expect(plainNumber(42)).toBe('42')
    for (const value of [1e-7, 3.3e-12, 2.5e22, -4e-8]) expect(Number(plainNumber(value))).toBe(value)
  })
})

describe('addMoney', () => {
  it('sums 0.1 and 0.2 to 0.3, and eight 0.1 to 0.8, not 0.7999999999999999', () => {
    expect(addMoney(0.1, 0.2)).toBe(0.3)
    let total = 0
    for (let i = 0; i < 8; i++) total = addMoney(total, 0.1)
    expect(total).toBe(0.8)
  })

  it('keeps every digit a real price gives, large and small', () => {
    expect(addMoney(12_345.678_901, 0.000_002)).toBe(12_345.678_903)
    expect(addMoney(0.000_000_123_4, 0.000_000_000_1)).toBe(0.000_000_123_5)
  })
})

describe('counted', () => {
  it('says one in the singular and any other count in the plural, digits grouped', () => {
    expect([counted(1, 'line'), counted(0, 'line'), counted(2, 'line'), counted(1_200, 'character')]).toEqual(['1 line', '0 lines', '2 lines', '1,200 characters'])
  })
})
