import { describe, expect, it } from 'vitest'
import { LlmError, addUsage, assistantMessage, isRetryable, toFailure, toolResultMessage, userMessage } from '../src/index.ts'

describe('messages', () => {
  it('are frozen copies', () => {
    const content = [{ type: 'text' as const, text: 'hi' }]
    const message = assistantMessage(content, { kind: 'model', provider: 'p', model: 'm' }, 'a1')
    content[0]!.text = 'changed'
    expect(message).toEqual({ id: 'a1', role: 'assistant', content: [{ type: 'text', text: 'hi' }], source: { kind: 'model', provider: 'p', model: 'm' } })
    expect(Object.isFrozen(message.content[0])).toBe(true)
  })

  it('carry tool results in a user-role message from the tool source', () => {
    expect(toolResultMessage([{ toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] }], 't1')).toEqual({
      id: 't1', role: 'user', source: { kind: 'tool' },
      content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] }],
    })
    expect(userMessage('x').id).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('usage and failures', () => {
  it('adds usage field by field, keeping absent fields absent', () => {
    expect(addUsage({ inputTokens: 1, outputTokens: 2 }, { inputTokens: 3, outputTokens: 4, cacheReadTokens: 5 })).toEqual({ inputTokens: 4, outputTokens: 6, cacheReadTokens: 5 })
    expect(addUsage()).toEqual({ inputTokens: 0, outputTokens: 0 })
  })

  it('classifies retryable codes', () => {
    expect(['RATE_LIMIT', 'SERVER', 'OVERLOADED', 'TIMEOUT', 'TRANSPORT', 'STREAM_CLOSED', 'EMPTY_RESPONSE'].every((code) => isRetryable(code as never))).toBe(true)
    expect(['AUTH', 'QUOTA', 'INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED', 'MALFORMED_RESPONSE'].some((code) => isRetryable(code as never))).toBe(false)
  })

  it('turns anything thrown into a failure', () => {
    expect(toFailure(new LlmError({ code: 'AUTH', message: 'bad key', status: 401 }))).toEqual({ code: 'AUTH', message: 'bad key', status: 401 })
    expect(toFailure(new Error('socket hang up'))).toEqual({ code: 'TRANSPORT', message: 'socket hang up' })
    expect(toFailure('weird')).toEqual({ code: 'TRANSPORT', message: 'weird' })
  })
})
