import { assistantMessage, createMessage, toolResultMessage, userMessage, type AdapterRequest } from '@rein/llm'
import { toWireBody, toWireMessages, toWireRequest } from '@rein/llm-openai'
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
        userMessage('thanks', 'u2'),
      ],
    }, deepSeekDialect)
    expect(messages.slice(1, -1)).toEqual([
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
        userMessage('and?', 'u1'),
        assistantMessage([{ type: 'reasoning', text: 'Own thoughts.' }, { type: 'text', text: 'Done.' }], source),
        userMessage('thanks', 'u2'),
      ],
    }, deepSeekDialect)
    expect(messages.filter((message) => message.role === 'assistant')).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }], reasoning_content: '' },
      { role: 'assistant', content: 'Hi.' },
      { role: 'assistant', content: 'Done.', reasoning_content: 'Own thoughts.' },
    ])
  })

  it('marks its own answers so their reasoning can be sent back', () => {
    expect(deepSeekDialect.replayState).toEqual({ dialect: 'deepseek' })
  })
})

describe('deepSeekDialect: roles alternate, as DeepSeek requires', () => {
  const model = { kind: 'model', provider: 'deepseek', model: 'deepseek-reasoner', replayState: { dialect: 'deepseek' } } as const
  const notice = { kind: 'plugin', plugin: 'jobs' } as const
  const defaults = { maxTokensField: 'max_tokens' } as const
  const route = { provider: 'deepseek', model: 'deepseek-reasoner', signal: new AbortController().signal }

  it('merges two answers in a row (a cut-off one, then the one a resume gave) and two user messages in a row into one each', () => {
    const request: AdapterRequest = {
      ...route,
      messages: [
        userMessage('go', 'u1'),
        assistantMessage([{ type: 'text', text: 'Some text then' }], model),
        assistantMessage([{ type: 'text', text: 'The whole answer.' }], model),
        createMessage('user', [{ type: 'text', text: 'job bash-1 ended' }], notice, 'n1'),
        userMessage('and now?', 'u2'),
      ],
    }
    const wire = toWireMessages(request, deepSeekDialect)
    expect(wire).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Some text then\n\nThe whole answer.' },
      { role: 'user', content: 'job bash-1 ended\n\nand now?' },
    ])
    expect(toWireBody(request, defaults, deepSeekDialect)).toBe(JSON.stringify(toWireRequest(request, defaults, deepSeekDialect)))
  })

  it('leaves out a cut-off answer the request would end with: the continued turn answers the user\'s message again', () => {
    const request: AdapterRequest = { ...route, messages: [userMessage('go', 'u1'), assistantMessage([{ type: 'text', text: 'Some text then' }], model)] }
    expect(toWireMessages(request, deepSeekDialect)).toEqual([{ role: 'user', content: 'go' }])
    expect(toWireBody(request, defaults, deepSeekDialect)).toBe(JSON.stringify(toWireRequest(request, defaults, deepSeekDialect)))
  })

  it.each([
    ['an empty user message between two answers', [userMessage('go', 'u1'), assistantMessage([{ type: 'text', text: 'a' }], model), createMessage('user', [], { kind: 'user' }, 'e'), assistantMessage([{ type: 'text', text: 'b' }], model), userMessage('x', 'u2')]],
    ['an empty user message after an answer, at the end', [userMessage('go', 'u1'), assistantMessage([{ type: 'text', text: 'a' }], model), createMessage('user', [], { kind: 'user' }, 'e')]],
    ['two answers with reasoning and no text', [userMessage('go', 'u1'), assistantMessage([{ type: 'reasoning', text: 'r1' }], model), assistantMessage([{ type: 'reasoning', text: 'r2' }], model), userMessage('x', 'u2')]],
    ['a cut-off answer, then one with calls', [userMessage('go', 'u1'), assistantMessage([{ type: 'reasoning', text: 'r1' }, { type: 'text', text: 'partial' }], model), assistantMessage([{ type: 'reasoning', text: 'r2' }, { type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], model), toolResultMessage([{ toolCallId: 'c1', content: [{ type: 'text', text: 'f' }] }], 'r1')]],
  ])('sends the same bytes as the request it stands for, with %s', (_what, messages) => {
    const request: AdapterRequest = { ...route, messages }
    const body = toWireBody(request, defaults, deepSeekDialect)
    expect(body).toBe(JSON.stringify(toWireRequest(request, defaults, deepSeekDialect)))
    const roles = (JSON.parse(body) as { messages: { role: string; content: unknown; tool_calls?: unknown }[] }).messages
    for (let i = 1; i < roles.length; i++) expect(roles[i]!.role === roles[i - 1]!.role && roles[i]!.role !== 'tool').toBe(false)
    expect(roles.at(-1)!.role === 'assistant' && roles.at(-1)!.tool_calls === undefined).toBe(false)
    expect(roles.filter((message) => message.role === 'assistant' && message.tool_calls === undefined && message.content === null)).toEqual([])
  })

  it('keeps tool results between the calls and the next message as they are', () => {
    const messages = [
      userMessage('go', 'u1'),
      assistantMessage([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], model),
      toolResultMessage([{ toolCallId: 'c1', content: [{ type: 'text', text: 'file' }] }], 'r1'),
      createMessage('user', [{ type: 'text', text: 'job bash-1 ended' }], notice, 'n1'),
    ]
    expect(toWireMessages({ messages }, deepSeekDialect).map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user'])
  })
})
