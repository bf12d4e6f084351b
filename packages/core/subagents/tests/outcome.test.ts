// A completed child's value: its usage and cost cover the same tree (the child and its own subagents).
import { describe, expect, it } from 'vitest'
import { outcome } from '../src/outcome.ts'

describe('outcome', () => {
  it('gives usage and cost of the same tree: the child turn and its own subagents', () => {
    const value = outcome('child-1', {
      turn: 1, runId: 'r', reason: 'completed', text: 'done',
      usage: { inputTokens: 3000, outputTokens: 300 }, cost: 3600,
      subagents: { usage: { inputTokens: 10_000, outputTokens: 1000 }, cost: 12_000 },
    }, 'done')
    expect(value).toEqual({ sessionId: 'child-1', answer: 'done', reason: 'completed', usage: { inputTokens: 13_000, outputTokens: 1300 }, cost: 15_600 })
  })

  it('gives the child turn alone when it delegated nothing', () => {
    const value = outcome('child-1', { turn: 1, runId: 'r', reason: 'completed', text: 'done', usage: { inputTokens: 5, outputTokens: 1 } }, 'done')
    expect(value).toEqual({ sessionId: 'child-1', answer: 'done', reason: 'completed', usage: { inputTokens: 5, outputTokens: 1 } })
  })
})
