// Run ids: drawn from a pool of random bytes, each unique and of one shape across refills.
import { describe, expect, it } from 'vitest'
import { newRunId } from '../src/identity.ts'

describe('newRunId', () => {
  it('gives distinct ids of one shape across many refills of its pool', () => {
    const ids = Array.from({ length: 1000 }, () => newRunId())
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^run_[A-Za-z0-9_-]{16}$/)
  })
})
