import { describe, expect, it } from 'vitest'
import { DEFAULT_RETRY_POLICY, retryDelay, type LlmFailure } from '../src/index.ts'

const server: LlmFailure = { code: 'SERVER', message: 'x' }

describe('retryDelay', () => {
  it('doubles from 500 ms to a 10 s ceiling', () => {
    const middle = () => 0.5
    expect([0, 1, 2, 3, 4, 5, 6].map((retry) => retryDelay(DEFAULT_RETRY_POLICY, retry, server, middle))).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000])
  })

  it('spreads each delay by at most ±10 %', () => {
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, server, () => 0)).toBe(900)
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, server, () => 0.999999)).toBe(1100)
  })

  it('uses Retry-After instead, cut to the cap', () => {
    expect(retryDelay(DEFAULT_RETRY_POLICY, 3, { ...server, retryAfterMs: 1500 })).toBe(1500)
    expect(retryDelay(DEFAULT_RETRY_POLICY, 0, { ...server, retryAfterMs: 600_000 })).toBe(30_000)
    expect(retryDelay(DEFAULT_RETRY_POLICY, 0, { ...server, retryAfterMs: Number.NaN }, () => 0.5)).toBe(500)
  })

  it('never asks for a wait longer than a timer can hold (about 24.8 days), whatever the policy', () => {
    const huge = { ...DEFAULT_RETRY_POLICY, maxDelayMs: 2 ** 40, retryAfterCapMs: 2 ** 40 }
    expect(retryDelay(huge, 0, { ...server, retryAfterMs: 2 ** 35 })).toBe(2 ** 31 - 1)
    expect(retryDelay({ ...huge, initialDelayMs: 2 ** 33, jitter: 0 }, 3, server)).toBe(2 ** 31 - 1)
  })
})
