import { assistantMessage, userMessage } from '@rein/llm'
import { toWireMessages } from '@rein/llm-openai'
import { describe, expect, it } from 'vitest'
import { deepSeekDialect } from '../src/index.ts'

const source = { kind: 'model', provider: 'deepseek', model: 'deepseek-v4-pro', replayState: { dialect: 'deepseek' } } as const

describe('deepSeekDialect', () => {
  it.each([
    [undefined, {}],
    ['off', { thinking: { type: 'disabled' } }],
    ['low', { thinking: { type: 'enabled' }, reasoning_effort: 'low' }],
    ['max', { thinking: { type: 'enabled' }, reasoning_effort: 'max' }],
  ])('expresses effort %s', (effort, fields) => {
    expect(deepSeekDialect.effortFields(effort)).toEqual(fields)
  })

  it('sends reasoning back on assistant turns, and an empty one on tool-call turns without it', () => {
    const messages = toWireMessages({
      messages: [
        userMessage('go', 'u'),
        assistantMessage([{ type: 'reasoning', text: 'Need ' }, { type: 'reasoning', text: 'the file.' }, { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source),
        assistantMessage([{ type: 'tool-call', id: 'c2', name: 'read', arguments: '{}' }], source),
        assistantMessage([{ type: 'text', text: 'Done.' }], source),
      ],
    }, deepSeekDialect)
    expect(messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }], reasoning_content: 'Need the file.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read', arguments: '{}' } }], reasoning_content: '' },
      { role: 'assistant', content: 'Done.' },
    ])
  })

  it('sends back only reasoning a DeepSeek answer produced, never another provider\'s', () => {
    const other = { kind: 'model', provider: 'openrouter', model: 'qwen3', replayState: { dialect: 'openai' } } as const
    const unmarked = { kind: 'model', provider: 'local', model: 'qwq' } as const
    const messages = toWireMessages({
      messages: [
        assistantMessage([{ type: 'reasoning', text: 'Foreign thoughts.' }, { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], other),
        assistantMessage([{ type: 'reasoning', text: 'Unmarked thoughts.' }, { type: 'text', text: 'Hi.' }], unmarked),
        assistantMessage([{ type: 'reasoning', text: 'Own thoughts.' }, { type: 'text', text: 'Done.' }], source),
      ],
    }, deepSeekDialect)
    expect(messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }], reasoning_content: '' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'assistant', content: 'Done.', reasoning_content: 'Own thoughts.' },
    ])
  })

  it('marks its own answers so their reasoning can be sent back', () => {
    expect(deepSeekDialect.replayState).toEqual({ dialect: 'deepseek' })
  })
})
