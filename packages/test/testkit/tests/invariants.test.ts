import { assistantMessage, userMessage } from '@rein/llm'
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { validateSessionInvariants } from '../src/index.ts'

const source = { kind: 'model', provider: 'p', model: 'm' } as const
function log(...entries: [string, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: data as never }))
}
const ask = assistantMessage([{ type: 'tool-call', id: 'c1', name: 'write', arguments: '{}' }], source, 'a1')
const intent: [string, unknown] = ['tool/call', { callId: 'c1', name: 'write', arguments: '{}', replaySafe: false }]
const result = (code?: string): [string, unknown] => ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'ok' }], isError: code !== undefined, ...(code ? { code } : {}) }]
const open: [string, unknown][] = [
  ['turn/start', { turn: 1 }],
  ['user/message', { message: userMessage('go', 'u1') }],
  ['step/start', { turn: 1, step: 1 }],
  ['assistant/message', { message: ask, provider: 'p', model: 'm' }],
]
const close: [string, unknown][] = [['step/end', { turn: 1, step: 1 }], ['turn/end', { turn: 1, reason: 'completed' }]]

describe('validateSessionInvariants', () => {
  it('accepts a paired call: intent, then result', () => {
    expect(validateSessionInvariants(log(...open, intent, result(), ...close))).toEqual([])
  })

  it('accepts a result without an intent only for a call that never started', () => {
    for (const code of ['TOOL_NOT_STARTED', 'ABORTED_BEFORE_DISPATCH', 'BUDGET_EXCEEDED']) {
      expect(validateSessionInvariants(log(...open, result(code), ...close))).toEqual([])
    }
    expect(validateSessionInvariants(log(...open, result(), ...close))).toEqual([
      '#4 tool/result: result for c1 without an intent; only a call that never started (TOOL_NOT_STARTED, ABORTED_BEFORE_DISPATCH, BUDGET_EXCEEDED) may have none',
    ])
  })

  it('reports a result written before its call\'s intent', () => {
    expect(validateSessionInvariants(log(...open, result(), intent, ...close))).toContain(
      '#5 tool/call: intent for c1 after its result',
    )
  })

  it('reports a user message between a call and its result', () => {
    const problems = validateSessionInvariants(log(...open, intent, ['user/message', { message: userMessage('meanwhile', 'u2') }], result(), ...close))
    expect(problems).toEqual(['#5 user/message: between tool call c1 and its result'])
  })

  it('reports a second intent for one call', () => {
    expect(validateSessionInvariants(log(...open, intent, intent, result(), ...close))).toEqual(['#5 tool/call: a second intent for c1'])
  })

  it('checks the usage of attempt records like that of answers', () => {
    const attempt: [string, unknown] = ['llm/attempt', { provider: 'p', model: 'm', retry: 0, fallback: 0, startedAt: 0, endedAt: 1, shown: true, usage: { inputTokens: -1, outputTokens: 2, reasoningTokens: 3 } }]
    expect(validateSessionInvariants(log(...open, attempt, intent, result(), ...close))).toEqual([
      '#4 llm/attempt: usage counts must be non-negative integers',
      '#4 llm/attempt: reasoning tokens exceed output tokens',
    ])
  })
})
