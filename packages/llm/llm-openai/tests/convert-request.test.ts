import { assistantMessage, createMessage, toolResultMessage, userMessage, type AdapterRequest } from '@rein/llm'
import { toFrozenJson } from '@rein/base'
import { describe, expect, it, vi } from 'vitest'
import { openAiDialect, toWireBody, toWireRequest } from '../src/index.ts'

const conversation: AdapterRequest = {
  provider: 'openai',
  model: 'gpt-test',
  system: 'You are terse.',
  messages: [
    userMessage('Read a.md and b.md', 'u1'),
    assistantMessage([
      { type: 'reasoning', text: 'Both files.' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
      { type: 'tool-call', id: 'call_2', name: 'read_file', arguments: '{"path": "b.md"}' },
    ], { kind: 'model', provider: 'openai', model: 'gpt-test' }, 'a1'),
    toolResultMessage([
      { toolCallId: 'call_1', content: [{ type: 'text', text: '# A' }] },
      { toolCallId: 'call_2', content: [{ type: 'text', text: 'Error: no such file' }], isError: true },
    ], 't1'),
    createMessage('user', [{ type: 'text', text: 'And this?' }, { type: 'image', mediaType: 'image/png', url: 'https://example.com/x.png' }], { kind: 'user' }, 'u2'),
  ],
  tools: [{ name: 'read_file', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
  maxTokens: 256,
  temperature: 0,
  reasoningEffort: 'low',
  signal: new AbortController().signal,
}

describe('toWireRequest', () => {
  it('maps a whole conversation to the chat-completions body', () => {
    expect(toWireRequest(conversation, { maxTokensField: 'max_tokens' }, openAiDialect)).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Read a.md and b.md' },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.md"}' } },
            { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path": "b.md"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '# A' },
        { role: 'tool', tool_call_id: 'call_2', content: 'Error: no such file' },
        { role: 'user', content: [{ type: 'text', text: 'And this?' }, { type: 'image_url', image_url: { url: 'https://example.com/x.png' } }] },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'read_file', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }],
      max_tokens: 256,
      temperature: 0,
      reasoning_effort: 'low',
    })
  })

  it('gives the same bytes for the same request, so the provider cache sees one prefix', () => {
    const a = JSON.stringify(toWireRequest(conversation, { maxTokensField: 'max_tokens' }, openAiDialect))
    const b = JSON.stringify(toWireRequest({ ...conversation, signal: new AbortController().signal }, { maxTokensField: 'max_tokens' }, openAiDialect))
    expect(a).toBe(b)
  })

  it('extends, never rewrites: a longer conversation keeps the previous messages byte for byte', () => {
    const short = JSON.stringify(toWireRequest({ ...conversation, messages: conversation.messages.slice(0, 2) }, { maxTokensField: 'max_tokens' }, openAiDialect).messages)
    const long = JSON.stringify(toWireRequest(conversation, { maxTokensField: 'max_tokens' }, openAiDialect).messages)
    expect(long.startsWith(short.slice(0, -1))).toBe(true)
  })

  it('keeps tool arguments as the model wrote them, invalid JSON included', () => {
    const request = { ...conversation, messages: [assistantMessage([{ type: 'tool-call', id: 'c', name: 'x', arguments: '{"a":' }], { kind: 'model', provider: 'p', model: 'm' })] }
    expect(toWireRequest(request, { maxTokensField: 'max_tokens' }, openAiDialect).messages.at(-1)).toEqual({
      role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: '{"a":' } }],
    })
  })

  it('uses the configured output-budget field and leaves out what the request leaves out', () => {
    const { tools: _tools, temperature: _temperature, reasoningEffort: _effort, system: _system, ...bare } = conversation
    const wire = toWireRequest({ ...bare, messages: [userMessage('hi', 'u')] }, { maxTokensField: 'max_completion_tokens' }, openAiDialect)
    expect(wire).toEqual({
      model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, max_completion_tokens: 256,
    })
  })
})

describe('toWireBody', () => {
  const defaults = { maxTokensField: 'max_tokens' } as const

  it('is the JSON of toWireRequest, byte for byte, for requests with and without each optional field', () => {
    const { tools: _tools, temperature: _temperature, reasoningEffort: _effort, system: _system, maxTokens: _max, ...bare } = conversation
    for (const request of [conversation, { ...bare, messages: [userMessage('hi', 'u')] }, { ...conversation, messages: [] }]) {
      expect(toWireBody(request, defaults, openAiDialect)).toBe(JSON.stringify(toWireRequest(request, defaults, openAiDialect)))
    }
  })

  it('gives the same bytes when the same frozen messages come again, and converts messages that are not frozen each time', () => {
    const first = toWireBody(conversation, defaults, openAiDialect)
    expect(toWireBody({ ...conversation, messages: [...conversation.messages] }, defaults, openAiDialect)).toBe(first)
    const text = { type: 'text' as const, text: 'before' }
    // A caller's own message object, not frozen: it may change between requests.
    const loose = { ...userMessage('x', 'm'), content: [text] }
    const before = toWireBody({ ...conversation, messages: [loose] }, defaults, openAiDialect)
    text.text = 'after'
    expect(toWireBody({ ...conversation, messages: [loose] }, defaults, openAiDialect)).toBe(before.replace('before', 'after'))
  })

  it('reuses the JSON of a frozen tool list, and converts a list that is not frozen each time', () => {
    const schema = toFrozenJson({ name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: {} } })
    const frozen = Object.freeze([schema])
    const first = toWireBody({ ...conversation, tools: frozen }, defaults, openAiDialect)
    expect(first).toBe(JSON.stringify(toWireRequest({ ...conversation, tools: frozen }, defaults, openAiDialect)))
    const stringify = vi.spyOn(JSON, 'stringify')
    try {
      expect(toWireBody({ ...conversation, tools: frozen }, defaults, openAiDialect)).toBe(first)
      const holdsTools = (value: unknown) => (Array.isArray(value) && value[0]?.type === 'function') || (typeof value === 'object' && value !== null && 'tools' in value)
      expect(stringify.mock.calls.some(([value]) => holdsTools(value))).toBe(false)
    } finally {
      stringify.mockRestore()
    }
    // A caller's own list: it may change between requests.
    const loose = [{ name: 'read', description: 'Reads a file.', parameters: { type: 'object' as const, properties: {} } }]
    const before = toWireBody({ ...conversation, tools: loose }, defaults, openAiDialect)
    loose[0]!.description = 'Reads one file.'
    expect(toWireBody({ ...conversation, tools: loose }, defaults, openAiDialect)).toBe(before.replace('Reads a file.', 'Reads one file.'))
  })

  it('stays the JSON of toWireRequest when a dialect sets a field the body also sets (stream_options)', () => {
    const dialect = { ...openAiDialect, effortFields: () => ({ stream_options: { include_usage: true, continuous_usage_stats: true } }) }
    const request = { ...conversation, tools: Object.freeze([toFrozenJson({ name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: {} } })]) }
    expect(toWireBody(request, defaults, dialect)).toBe(JSON.stringify(toWireRequest(request, defaults, dialect)))
  })

  it('stays byte for byte right as a conversation grows, is cut, or has a message replaced in the middle', () => {
    const frozen = [userMessage('first', 'u1'), userMessage('second', 'u2'), userMessage('third', 'u3'), userMessage('fourth', 'u4')]
    const bodies = [
      frozen.slice(0, 2),
      frozen.slice(0, 4),
      // A compaction: the second message replaced by another, the rest the same objects.
      [frozen[0]!, userMessage('[summary]', 's'), frozen[2]!, frozen[3]!],
      frozen.slice(0, 1),
      frozen,
    ]
    for (const messages of bodies) {
      const request = { ...conversation, messages }
      expect(toWireBody(request, defaults, openAiDialect)).toBe(JSON.stringify(toWireRequest(request, defaults, openAiDialect)))
    }
  })
})
