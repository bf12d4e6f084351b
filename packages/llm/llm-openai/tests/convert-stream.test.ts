import { describe, expect, it } from 'vitest'
import { BlockAssembler, type StreamChunk } from '@rein/llm'
import { createChunkTranslator, mapUsage } from '../src/index.ts'

function translate(payloads: unknown[], sawDone = true): StreamChunk[] {
  const translator = createChunkTranslator('Test')
  return [...payloads.flatMap((payload) => translator.push(payload)), ...translator.end(sawDone)]
}

const delta = (d: object, finish: string | null = null) => ({ choices: [{ index: 0, delta: d, finish_reason: finish }] })

describe('createChunkTranslator', () => {
  it('translates a text stream, passing usage on as it comes and holding the finish for the end', () => {
    expect(translate([
      delta({ role: 'assistant', content: '' }),
      delta({ content: 'Hel' }),
      delta({ content: 'lo' }),
      delta({}, 'stop'),
      { choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } } },
    ])).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: 0 } },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello' } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('accumulates interleaved tool calls by wire index, in first-seen order', () => {
    expect(translate([
      delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x"' } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      delta({}, 'tool_calls'),
    ])).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'call_b', name: 'b', argumentsDelta: '' },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'call_a', name: 'a', argumentsDelta: '{"x"' },
      { type: 'tool-call-delta', index: 0, id: 'call_b', argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 1, id: 'call_a', argumentsDelta: ':1}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'call_b', name: 'b', arguments: '{}' } },
      { type: 'block-end', index: 1, block: { type: 'tool-call', id: 'call_a', name: 'a', arguments: '{"x":1}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('reads reasoning_content, skipping the empty opener, and reasoning (OpenRouter)', () => {
    expect(translate([
      delta({ role: 'assistant', content: null, reasoning_content: '' }),
      delta({ content: null, reasoning_content: 'Think' }),
      delta({ reasoning: '!' }),
      delta({ content: 'Answer', reasoning_content: null }),
      delta({}, 'stop'),
    ]).filter((chunk) => chunk.type !== 'block-start')).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Think' },
      { type: 'reasoning-delta', index: 0, text: '!' },
      { type: 'text-delta', index: 1, text: 'Answer' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'Think!' } },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'Answer' } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it.each([
    ['with no index (each call whole in its own event)', undefined],
    ['all at index 0', 0],
  ])('keeps calls sent one after another %s apart: a new id is a new call', (_case, index) => {
    const at = index === undefined ? {} : { index }
    const chunks = translate([
      delta({ tool_calls: [{ ...at, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } }] }),
      delta({ tool_calls: [{ ...at, function: { arguments: '1}' } }] }),
      delta({ tool_calls: [{ ...at, id: 'b', type: 'function', function: { name: 'g', arguments: '{"y":2}' } }] }),
      delta({}, 'tool_calls'),
    ])
    const calls = chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))
    expect(calls).toEqual([
      { type: 'tool-call', id: 'a', name: 'f', arguments: '{"x":1}' },
      { type: 'tool-call', id: 'b', name: 'g', arguments: '{"y":2}' },
    ])
  })

  it('keeps one call whose later deltas carry another id but no name (some servers change it)', () => {
    const chunks = translate([
      delta({ tool_calls: [{ index: 0, id: 'first', function: { name: 'f', arguments: '{"x":' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'second', function: { arguments: '1}' } }] }),
      delta({}, 'tool_calls'),
    ])
    expect(chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))).toEqual([{ type: 'tool-call', id: 'first', name: 'f', arguments: '{"x":1}' }])
  })

  it('keeps one call whose id comes only after its first delta', () => {
    const chunks = translate([
      delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"x":' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'late', function: { arguments: '1}' } }] }),
      delta({}, 'tool_calls'),
    ])
    expect(chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))).toEqual([{ type: 'tool-call', id: expect.stringMatching(/^call_/), name: 'f', arguments: '{"x":1}' }])
  })

  it('keeps one call whose every delta repeats its id', () => {
    const chunks = translate([
      delta({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '1}' } }] }),
      delta({}, 'tool_calls'),
    ])
    expect(chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))).toEqual([{ type: 'tool-call', id: 'a', name: 'f', arguments: '{"x":1}' }])
  })

  describe('a tool name streamed in pieces', () => {
    const calls = (chunks: StreamChunk[]) => chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))
    const call = (index: number, fn: object, id?: string) => ({ tool_calls: [{ index, ...(id === undefined ? {} : { id }), function: fn }] })

    it.each([
      ['two', ['look', 'up']],
      ['three', ['lo', 'ok', 'up']],
    ])('is called by its whole name when split over %s deltas', (_count, pieces) => {
      const chunks = translate([
        ...pieces.map((name, i) => delta(call(0, { name, arguments: '' }, i === 0 ? 'call_a' : undefined))),
        delta(call(0, { arguments: '{"q":1}' })),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([{ type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{"q":1}' }])
    })

    it('tells the deltas\' reader the whole name so far each time it grows, never a bare piece', () => {
      const chunks = translate([
        delta(call(0, { name: 'look', arguments: '' }, 'call_a')),
        delta(call(0, { name: 'up', arguments: '' })),
        delta(call(0, { arguments: '{}' })),
        delta({}, 'tool_calls'),
      ])
      expect(chunks.filter((chunk) => chunk.type === 'tool-call-delta')).toEqual([
        { type: 'tool-call-delta', index: 0, id: 'call_a', name: 'look', argumentsDelta: '' },
        { type: 'tool-call-delta', index: 0, id: 'call_a', name: 'lookup', argumentsDelta: '' },
        { type: 'tool-call-delta', index: 0, id: 'call_a', argumentsDelta: '{}' },
      ])
      // A consumer that has only the deltas (a stream cut before its block-end) still names the call whole.
      const assembler = new BlockAssembler()
      for (const chunk of chunks) if (chunk.type !== 'block-end') assembler.push(chunk)
      expect(assembler.blocks()).toEqual([{ type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{}' }])
    })

    it('is called by its name once when a relay repeats the whole name on every delta', () => {
      const chunks = translate([
        delta(call(0, { name: 'lookup', arguments: '' }, 'call_a')),
        delta(call(0, { name: 'lookup', arguments: '{"q":' }, 'call_a')),
        delta(call(0, { name: 'lookup', arguments: '1}' }, 'call_a')),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([{ type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{"q":1}' }])
      expect(chunks.filter((chunk) => chunk.type === 'tool-call-delta' && chunk.name !== undefined)).toHaveLength(1)
    })

    it('is called by its whole name when a piece is repeated and then continued', () => {
      const chunks = translate([
        delta(call(0, { name: 'look', arguments: '' }, 'call_a')),
        delta(call(0, { name: 'look', arguments: '' })),
        delta(call(0, { name: 'up', arguments: '{}' })),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([{ type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{}' }])
    })

    it('keeps parallel calls apart, each called by its whole name', () => {
      const chunks = translate([
        delta(call(0, { name: 'read', arguments: '' }, 'call_a')),
        delta(call(1, { name: 'list', arguments: '' }, 'call_b')),
        delta(call(1, { name: '_dir', arguments: '{}' })),
        delta(call(0, { name: '_file', arguments: '{"path":"a"}' })),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([
        { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a"}' },
        { type: 'tool-call', id: 'call_b', name: 'list_dir', arguments: '{}' },
      ])
    })

    it('keeps one call whose every delta repeats its id while its name streams in pieces', () => {
      const chunks = translate([
        delta(call(0, { name: 'look', arguments: '' }, 'call_a')),
        delta(call(0, { name: 'up', arguments: '{}' }, 'call_a')),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([{ type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{}' }])
    })

    it('still starts another call at a new id with a name where a call is open', () => {
      const chunks = translate([
        delta(call(0, { name: 'look', arguments: '' }, 'a')),
        delta(call(0, { name: 'up', arguments: '{}' })),
        delta(call(0, { name: 'look', arguments: '{}' }, 'b')),
        delta({}, 'tool_calls'),
      ])
      expect(calls(chunks)).toEqual([
        { type: 'tool-call', id: 'a', name: 'lookup', arguments: '{}' },
        { type: 'tool-call', id: 'b', name: 'look', arguments: '{}' },
      ])
    })
  })

  it('fills in a missing tool call id and re-serializes object arguments once', () => {
    const chunks = translate([delta({ tool_calls: [{ index: 0, function: { name: 'x', arguments: { a: 1 } } }] }), delta({}, 'stop')])
    expect(chunks.at(-2)).toEqual({ type: 'block-end', index: 0, block: { type: 'tool-call', id: expect.stringMatching(/^call_[A-Za-z0-9_-]{24}$/), name: 'x', arguments: '{"a":1}' } })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('gives calls without ids distinct ids across responses, so a session never repeats one', () => {
    const ids = (chunks: StreamChunk[]) => chunks.flatMap((chunk) => chunk.type === 'block-end' && chunk.block.type === 'tool-call' ? [chunk.block.id] : [])
    const response = () => translate([delta({ tool_calls: [{ index: 0, function: { name: 'a', arguments: '{}' } }, { index: 1, function: { name: 'b', arguments: '{}' } }] }), delta({}, 'tool_calls')])
    const all = [...ids(response()), ...ids(response())]
    expect(all).toHaveLength(4)
    expect(new Set(all).size).toBe(4)
    const first = response()
    const deltaIds = new Set(first.flatMap((chunk) => chunk.type === 'tool-call-delta' && chunk.index === 0 ? [chunk.id] : []))
    expect(deltaIds).toEqual(new Set([ids(first)[0]]))
  })

  it('puts the response id and model on the finish chunk', () => {
    const chunks = translate([
      { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', ...delta({ content: 'x' }) },
      { id: 'chatcmpl-1', model: 'gpt-4o-2024-08-06', ...delta({}, 'stop') },
    ])
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', responseId: 'chatcmpl-1', responseModel: 'gpt-4o-2024-08-06' })
  })

  it('marks a finished answer with the replay state it is given, and a failed one without it', () => {
    const marked = (payloads: unknown[]) => {
      const translator = createChunkTranslator('Test', { replayState: { dialect: 'deepseek' } })
      return [...payloads.flatMap((payload) => translator.push(payload)), ...translator.end(true)].at(-1)
    }
    expect(marked([delta({ content: 'x' }, 'stop')])).toEqual({ type: 'finish', reason: 'stop', replayState: { dialect: 'deepseek' } })
    expect(marked([delta({ content: 'x' }, 'content_filter')])).not.toHaveProperty('replayState')
  })

  it('passes each usage on as it comes, on whatever chunk it rides, the last one after the deltas it counts', () => {
    const chunks = translate([
      { ...delta({ content: 'a' }), usage: { prompt_tokens: 1, completion_tokens: 1 } },
      { ...delta({}, 'stop'), usage: { prompt_tokens: 1200, completion_tokens: 40, prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 176, completion_tokens_details: { reasoning_tokens: 12 } } },
    ])
    // Cumulative reports: each replaces the one before it (the assembler and the runtime keep the last).
    expect(chunks.filter((chunk) => chunk.type === 'usage')).toEqual([
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: 176, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 } },
    ])
    expect(chunks.findIndex((chunk) => chunk.type === 'usage')).toBeGreaterThan(chunks.findIndex((chunk) => chunk.type === 'text-delta'))
  })

  it.each([
    ['length', { type: 'finish', reason: 'max-tokens' }],
    ['content_filter', { type: 'finish', reason: 'error', failure: { code: 'INVALID_REQUEST', message: "the provider's content filter stopped the response" } }],
    ['insufficient_system_resource', { type: 'finish', reason: 'error', failure: { code: 'SERVER', message: 'the provider ran out of capacity mid-response (insufficient_system_resource)' } }],
    ['something_new', { type: 'finish', reason: 'stop' }],
  ])('maps finish_reason %s', (reason, finish) => {
    expect(translate([delta({ content: 'x' }), delta({}, reason)]).at(-1)).toEqual(finish)
  })

  it('accepts [DONE] without a finish_reason, but not a stream that just stops', () => {
    expect(translate([delta({ content: 'x' })], true).at(-1)).toEqual({ type: 'finish', reason: 'stop' })
    expect(() => translate([delta({ content: 'x' })], false)).toThrow(expect.objectContaining({ code: 'STREAM_CLOSED' }))
  })

  it.each([
    [[42], 'MALFORMED_RESPONSE', 'Test sent a stream event that is not a JSON object (number 42)'],
    [[{ hello: 'world' }], 'MALFORMED_RESPONSE', 'Test sent a stream event with neither choices nor usage, which is no chat-completion chunk; is the server an OpenAI-compatible chat-completions API?'],
    [[{ error: { message: 'upstream timeout', type: 'server_error' } }], 'SERVER', 'Test reported an error mid-stream: upstream timeout'],
    [[{ error: { message: 'slow down', code: 'rate_limit_exceeded' } }], 'RATE_LIMIT', 'Test reported an error mid-stream: slow down'],
  ])('fails with a typed error on %j', (payloads, code, message) => {
    expect(() => translate(payloads)).toThrow(expect.objectContaining({ code, message }))
  })
})

describe('mapUsage', () => {
  it('takes cached tokens out of the input, so the counts are disjoint', () => {
    expect(mapUsage({ prompt_tokens: 100, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 10 } }))
      .toEqual({ inputTokens: 40, outputTokens: 30, cacheReadTokens: 60, reasoningTokens: 10 })
    expect(mapUsage({ prompt_tokens: null, completion_tokens: null })).toEqual({ inputTokens: 0, outputTokens: 0 })
  })

  it('never counts more input than the server says the prompt had: cached tokens above prompt_tokens are capped at it', () => {
    expect(mapUsage({ prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 150 } }))
      .toEqual({ inputTokens: 0, outputTokens: 10, cacheReadTokens: 100 })
    expect(mapUsage({ prompt_tokens: 100, completion_tokens: 10, prompt_cache_hit_tokens: 300 }))
      .toEqual({ inputTokens: 0, outputTokens: 10, cacheReadTokens: 100 })
    // No prompt count to hold it to: the cached count is all there is.
    expect(mapUsage({ completion_tokens: 10, prompt_tokens_details: { cached_tokens: 40 } }))
      .toEqual({ inputTokens: 0, outputTokens: 10, cacheReadTokens: 40 })
  })

  it('adds reasoning to the output when a server counts it apart (more reasoning than completion tokens): output always holds reasoning', () => {
    expect(mapUsage({ prompt_tokens: 10, completion_tokens: 5, completion_tokens_details: { reasoning_tokens: 9 } }))
      .toEqual({ inputTokens: 10, outputTokens: 14, reasoningTokens: 9 })
  })
})
