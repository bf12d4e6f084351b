// A completed child's value: its usage and cost cover the same tree (the child and its own subagents).
import { describe, expect, it } from 'vitest'
import { outcome, unfinished } from '../src/outcome.ts'

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

describe('a child that did not complete', () => {
  it('is not offered to the model for resume when its context is full, as resuming would only fail again: it says to delegate a smaller task', () => {
    const error = unfinished('s1', { reason: 'error', error: { code: 'CONTEXT_FULL', message: 'the request is about 250000 tokens after compaction' } }, '')
    expect(error.code).toBe('SUBAGENT_FAILED')
    expect(error.message).not.toContain('continues it')
    expect(error.message).toContain('subagent session s1')
    expect(error.message).toMatch(/new subagent.*shorter prompt/)
  })

  it('is offered for resume when it failed any other way', () => {
    expect(unfinished('s1', { reason: 'error', error: { code: 'TRANSPORT', message: 'slow down' } }, 'half').message).toContain('subagent with resume: "s1" continues it')
  })
})
