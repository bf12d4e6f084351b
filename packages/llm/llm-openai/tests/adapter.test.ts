// The adapter over real HTTP against the testkit's mock server, through a real LlmRuntime.
import { Context } from '@deepseek-ai/cordis'
import type { JsonValue } from '@rein/base'
import LlmRuntime, { BlockAssembler, userMessage, type LlmAttempt, type LlmEvent, type LlmRequest, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockScript, type MockServer, type MockStep } from '@rein/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as openai from '../src/index.ts'

const KEY = 'sk-test-abcdef0123456789'
let server: MockServer | undefined

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await server?.close()
  server = undefined
  delete process.env.REIN_TEST_OPENAI_KEY
})

async function boot(script: MockScript, config: Partial<openai.Config> = {}, maxRetries = 2) {
  server = await startMockOpenAiServer(script)
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 5 } })
  await root.plugin(openai, { baseURL: server.url, apiKeyEnv: 'REIN_TEST_OPENAI_KEY', label: 'OpenAI', ...config })
  return { root, server }
}

async function run(root: Context, request: Partial<LlmRequest> = {}) {
  const events: LlmEvent[] = []
  const chunks: StreamChunk[] = []
  const assembler = new BlockAssembler()
  // Retry and fallback events only: attempt records are checked in their own tests.
  for await (const chunk of root.llm.stream({ provider: 'openai', model: 'gpt-test', messages: [userMessage('hi', 'u1')], onEvent: (event) => { if (!event.type.startsWith('attempt')) events.push(event) }, ...request })) {
    chunks.push(chunk)
    assembler.push(chunk)
  }
  return { chunks, events, blocks: assembler.blocks(), finish: chunks.at(-1) as Extract<StreamChunk, { type: 'finish' }> }
}

describe('OpenAiCompatibleAdapter over HTTP', () => {
  it('sends the request when the headers option sends headers at once (expect: 100-continue)', async () => {
    const { root } = await boot([{ steps: [{ text: 'continued' }] }], { headers: { expect: '100-continue' } })
    const { finish, blocks } = await run(root)
    expect(finish).toMatchObject({ reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: 'continued' }])
  })

  it('gives streamBatches the chunks stream gives, in order, each read a non-empty batch', async () => {
    const reply = { steps: [{ text: 'Hello' }, { text: ' world' }, { toolCall: { id: 'c1', name: 'look', arguments: '{"q":1}' } }], usage: { prompt_tokens: 9, completion_tokens: 2 } }
    const { root } = await boot([reply, reply])
    const { chunks } = await run(root)
    const batches: (readonly StreamChunk[])[] = []
    for await (const batch of root.llm.streamBatches({ provider: 'openai', model: 'gpt-test', messages: [userMessage('hi', 'u1')] })) batches.push(batch)
    expect(batches.every((batch) => batch.length > 0)).toBe(true)
    expect(batches.flat()).toEqual(chunks)
  })

  it('streams text and usage, and sends the request the converter builds', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'Hello' }, { text: ' world' }], usage: { prompt_tokens: 9, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } }])
    const { chunks, blocks } = await run(root, { system: 'Be brief.', maxTokens: 64 })
    expect(blocks).toEqual([{ type: 'text', text: 'Hello world' }])
    expect(chunks.slice(-3)).toEqual([
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 4 } },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello world' } },
      { type: 'finish', reason: 'stop', responseId: 'chatcmpl-mock', responseModel: 'gpt-test' },
    ])
    const [request] = server.requests
    expect(request!.path).toBe('/v1/chat/completions')
    expect(request!.body).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 64,
    })
    expect(request!.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'user-agent': openai.USER_AGENT })
    expect(openai.USER_AGENT).toMatch(/^rein\/\d+\.\d+\.\d+$/)
  })

  it('assembles tool calls from argument fragments, keeping the raw text', async () => {
    const { root } = await boot([{ steps: [
      { toolCall: { id: 'call_a', name: 'read_file', arguments: ['{"pa', 'th": "a.', 'md"}'] } },
      { toolCall: { id: 'call_b', name: 'broken', arguments: ['{"x": '] } },
    ] }])
    const { blocks, finish } = await run(root)
    expect(blocks).toEqual([
      { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path": "a.md"}' },
      { type: 'tool-call', id: 'call_b', name: 'broken', arguments: '{"x": ' },
    ])
    expect(finish).toEqual({ type: 'finish', reason: 'tool-calls', responseId: 'chatcmpl-mock', responseModel: 'gpt-test' })
  })

  it('calls a tool by its whole name when the server streams the name in pieces, and by its name once when a relay repeats it', async () => {
    const call = (index: number, id: string | undefined, fn: Record<string, string>): MockStep => {
      const tool: Record<string, JsonValue> = { index, ...(id === undefined ? {} : { id, type: 'function' }), function: fn }
      return { event: { id: 'chatcmpl-mock', model: 'gpt-test', choices: [{ index: 0, delta: { tool_calls: [tool] }, finish_reason: null }] } }
    }
    const { root } = await boot([{ finishReason: 'tool_calls', steps: [
      call(0, 'call_a', { name: 'look', arguments: '' }),
      call(1, 'call_b', { name: 'read_file', arguments: '' }),
      call(0, undefined, { name: 'up', arguments: '{"q":' }),
      call(1, 'call_b', { name: 'read_file', arguments: '{"path":"a.md"}' }),
      call(0, undefined, { arguments: '1}' }),
    ] }])
    const { blocks, finish } = await run(root)
    expect(blocks).toEqual([
      { type: 'tool-call', id: 'call_a', name: 'lookup', arguments: '{"q":1}' },
      { type: 'tool-call', id: 'call_b', name: 'read_file', arguments: '{"path":"a.md"}' },
    ])
    expect(finish).toMatchObject({ type: 'finish', reason: 'tool-calls' })
  })

  it('ignores keep-alive comments and blank lines, and survives UTF-8 split across reads', async () => {
    const { root } = await boot([{ steps: [{ keepAlive: true }, { raw: '\n\n' }, { text: 'naïve ☃ 😀 — done' }, { keepAlive: true }], chunkBytes: 3 }])
    const { blocks, finish } = await run(root)
    expect(blocks).toEqual([{ type: 'text', text: 'naïve ☃ 😀 — done' }])
    expect(finish.reason).toBe('stop')
  })

  it('retries a 429, honouring Retry-After, and records both requests', async () => {
    const { root, server } = await boot([
      { kind: 'error', status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '1' } },
      { steps: [{ text: 'ok' }] },
    ])
    const { blocks, events } = await run(root)
    expect(blocks).toEqual([{ type: 'text', text: 'ok' }])
    expect(events).toEqual([{
      type: 'retry', provider: 'openai', model: 'gpt-test', attempt: 1, delayMs: 5,
      failure: { code: 'RATE_LIMIT', message: 'OpenAI returned HTTP 429: Rate limit reached', status: 429, retryAfterMs: 1000, requestId: 'mock-req-1' },
    }])
    expect(server.requests).toHaveLength(2)
    expect(server.requests[1]!.raw).toBe(server.requests[0]!.raw)
  })

  it.each([
    [500, 'SERVER'],
    [503, 'SERVER'],
    [529, 'OVERLOADED'],
  ])('retries HTTP %i (%s) until the retries run out', async (status, code) => {
    const reply = { kind: 'error' as const, status, message: 'busy' }
    const { root, server } = await boot([reply, reply, reply], {}, 2)
    const { finish, events } = await run(root)
    expect(finish).toEqual({ type: 'finish', reason: 'error', failure: { code, message: `OpenAI returned HTTP ${status}: busy`, status, requestId: 'mock-req-3' } })
    expect(events.map((event) => event.type)).toEqual(['retry', 'retry'])
    expect(server.requests).toHaveLength(3)
  })

  it.each([
    [{ kind: 'error' as const, status: 401, message: 'Incorrect API key provided: sk-test-abc***6789', code: 'invalid_api_key' }, 'AUTH'],
    [{ kind: 'error' as const, status: 402, message: 'Insufficient Balance' }, 'QUOTA'],
    [{ kind: 'error' as const, status: 400, message: "This model's maximum context length is 128000 tokens.", code: 'context_length_exceeded' }, 'CONTEXT_WINDOW_EXCEEDED'],
    [{ kind: 'error' as const, status: 400, message: 'Invalid temperature' }, 'INVALID_REQUEST'],
  ])('does not retry a final status (%#)', async (reply, code) => {
    const { root, server } = await boot([reply, { steps: [{ text: 'never' }] }])
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe(code)
    expect(server.requests).toHaveLength(1)
    expect(finish.failure?.message).not.toContain('abc')
  })

  it('says which variable the rejected key came from, or that no key was sent', async () => {
    const rejected = { kind: 'error' as const, status: 401, message: 'Incorrect API key provided' }
    const withKey = await boot([rejected])
    expect((await run(withKey.root)).finish.failure?.message).toBe('OpenAI returned HTTP 401: Incorrect API key provided (check the key in REIN_TEST_OPENAI_KEY)')
    const withoutKey = await boot([rejected], { apiKeyEnv: false })
    expect((await run(withoutKey.root)).finish.failure?.message).toBe('OpenAI returned HTTP 401: Incorrect API key provided (no key was sent: apiKeyEnv is false; name the variable that holds one)')
    const withHeader = await boot([rejected], { apiKeyEnv: false, headers: { 'x-api-key': 'k-123' } })
    expect((await run(withHeader.root)).finish.failure?.message).toBe('OpenAI returned HTTP 401: Incorrect API key provided (check the x-api-key header)')
  })

  it('ends with TIMEOUT when the stream goes silent, and retries only before the first delta', async () => {
    const { root, server } = await boot([{ steps: [{ stall: true }] }, { steps: [{ text: 'partial' }, { stall: true }] }], { streamIdleTimeoutMs: 150 })
    const { finish, events, chunks } = await run(root)
    expect(events.map((event) => event.type === 'retry' && event.failure)).toEqual([{ code: 'TIMEOUT', message: 'OpenAI sent no response for 150 ms (streamIdleTimeoutMs)' }])
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'partial' }])
    expect(finish).toEqual({ type: 'finish', reason: 'error', failure: { code: 'TIMEOUT', message: 'OpenAI sent nothing for 150 ms (streamIdleTimeoutMs)' } })
    expect(server.requests).toHaveLength(2)
  })

  it('ends with STREAM_CLOSED when the connection drops mid-stream, keeping the text shown', async () => {
    const { root } = await boot([{ steps: [{ text: 'Hal' }, { disconnect: true }] }])
    const { finish, chunks } = await run(root)
    expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true)
    expect(finish.failure?.code).toBe('STREAM_CLOSED')
  })

  it.each([
    ['reset', { disconnect: true } as const],
    ['silent', { stall: true } as const],
  ])('keeps a whole answer when the connection is %s after the model finished, before [DONE]', async (_case, after) => {
    const finished = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}\n\n'
    const { root, server } = await boot([{ steps: [{ toolCall: { id: 'c1', name: 'f', arguments: '{}' } }, { raw: finished }, after] }], { streamIdleTimeoutMs: 150 })
    const { finish, chunks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'tool-calls' })
    expect(chunks).toContainEqual({ type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c1', name: 'f', arguments: '{}' } })
    expect(chunks).toContainEqual({ type: 'usage', usage: { inputTokens: 10, outputTokens: 3 } })
    expect(server.requests).toHaveLength(1)
  })

  it('does not wait out the silence limit for [DONE] once the model finished and the closing usage chunk came', async () => {
    const finished = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}\n\n'
    // A silence limit no test outlives: the answer must end on what the server sent, not on the limit.
    const { root } = await boot([{ steps: [{ text: 'Hello' }, { raw: finished }, { stall: true }] }], { streamIdleTimeoutMs: 3_600_000 })
    const { finish, chunks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(chunks).toContainEqual({ type: 'usage', usage: { inputTokens: 10, outputTokens: 3 } })
  })

  it('reads on to [DONE] from a relay that marks every chunk finished, with usage on each', async () => {
    const chunk = (text: string, tokens: number) => `data: {"choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":${tokens}}}\n\n`
    const { root } = await boot([{ steps: [{ raw: chunk('Hello', 1) }, { raw: chunk(' there', 2) }, { raw: chunk(', world', 3) }], finishReason: null, usage: null }])
    const { finish, blocks, chunks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: 'Hello there, world' }])
    expect(chunks).toContainEqual({ type: 'usage', usage: { inputTokens: 10, outputTokens: 3 } })
  })

  it('still reads on after a finish that came without usage: the usage follows it', async () => {
    const { root } = await boot([{ steps: [{ text: 'Hello' }, { raw: 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' }, { raw: 'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}\n\n' }], finishReason: null, usage: null }])
    const { finish, chunks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(chunks).toContainEqual({ type: 'usage', usage: { inputTokens: 10, outputTokens: 3 } })
  })

  it('maps malformed JSON and in-stream errors', async () => {
    const { root } = await boot([
      { steps: [{ text: 'a' }, { raw: 'data: {"choices": [oops\n\n' }] },
      { steps: [{ text: 'b' }, { error: { message: 'model crashed', type: 'server_error' } }] },
    ])
    expect((await run(root)).finish.failure).toEqual({ code: 'MALFORMED_RESPONSE', message: 'OpenAI sent a stream event that is not JSON: {"choices": [oops' })
    expect((await run(root)).finish.failure).toEqual({ code: 'SERVER', message: 'OpenAI reported an error mid-stream: model crashed' })
  })

  it('turns garbage bytes and a truncated stream into typed failures', async () => {
    const { root } = await boot([
      { steps: [{ raw: '\u0000\u0001 binary \uFFFD garbage without any framing' }], finishReason: null, done: false },
      { steps: [{ text: 'cut' }], finishReason: null, done: false },
    ], {}, 0)
    // Text and no event at all is what the server sent in place of a stream: cut short, and quoted.
    const garbage = await run(root)
    expect(garbage.finish.failure?.code).toBe('STREAM_CLOSED')
    expect(garbage.finish.failure?.message).toMatch(/^OpenAI sent no events in its event stream, only other text; it began "\\u0000\\u0001 binary \uFFFD garbage without any framing/)
    const truncated = await run(root)
    expect(truncated.finish.failure?.code).toBe('STREAM_CLOSED')
    expect(truncated.chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'cut' }])
  })

  it('treats a stream cut off inside an event as STREAM_CLOSED and retries it, not as a malformed event', async () => {
    const cut = 'data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","choi'
    const { root } = await boot([
      { steps: [{ raw: cut }], finishReason: null, done: false, usage: null },
      { steps: [{ text: 'whole' }] },
      { steps: [{ text: 'half' }, { raw: cut }], finishReason: null, done: false, usage: null },
    ])
    const retried = await run(root)
    expect(retried.events.map((event) => event.type === 'retry' && event.failure.code)).toEqual(['STREAM_CLOSED'])
    expect(retried.finish.reason).toBe('stop')
    const shown = await run(root)
    expect(shown.finish.failure).toEqual({ code: 'STREAM_CLOSED', message: 'OpenAI closed the stream in the middle of an event' })
    expect(shown.chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'half' }])
  })

  it('still reads a last event whose line is whole but lacks the closing blank line', async () => {
    const finish = 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
    const { root } = await boot([{ steps: [{ text: 'ok' }, { raw: finish }], finishReason: null, done: false, usage: null }])
    expect((await run(root)).finish.reason).toBe('stop')
  })

  it('falls back to a second server after retries run out, as the recorded requests show', async () => {
    const busy = { kind: 'error' as const, status: 503, message: 'overloaded' }
    const { root, server: primary } = await boot([busy, busy, busy], {}, 2)
    const secondary = await startMockOpenAiServer([{ steps: [{ text: 'from the fallback' }] }])
    try {
      await root.plugin(openai, { provider: 'backup', baseURL: secondary.url, apiKeyEnv: false })
      const { blocks, events } = await run(root, { fallbacks: [{ provider: 'backup', model: 'small' }] })
      expect(blocks).toEqual([{ type: 'text', text: 'from the fallback' }])
      expect(events.map((event) => event.type)).toEqual(['retry', 'retry', 'fallback'])
      expect(primary.requests.map((request) => (request.body as { model: string }).model)).toEqual(['gpt-test', 'gpt-test', 'gpt-test'])
      expect(secondary.requests.map((request) => (request.body as { model: string }).model)).toEqual(['small'])
      expect(secondary.requests[0]!.headers.authorization).toBeUndefined()
    } finally {
      await secondary.close()
    }
  })

  it('fails before any I/O without a key, naming the variable and never the value', async () => {
    const { root, server } = await boot([])
    delete process.env.REIN_TEST_OPENAI_KEY
    const missing = await run(root)
    expect(missing.finish.failure).toEqual({
      code: 'MISSING_CREDENTIAL',
      message: 'OpenAI needs an API key: set the environment variable REIN_TEST_OPENAI_KEY (or configure apiKeyEnv: false for a server without keys)',
    })
    process.env.REIN_TEST_OPENAI_KEY = 'sk-secret\nwith-newline'
    const invalid = await run(root)
    expect(invalid.finish.failure?.code).toBe('INVALID_CREDENTIAL')
    expect(JSON.stringify(invalid.finish)).not.toContain('sk-secret')
    expect(server.requests).toHaveLength(0)
  })

  it('sends no authorization header to a keyless server', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'local' }] }], { apiKeyEnv: false, headers: { 'x-team': 'rein' } })
    await run(root)
    expect(server.requests[0]!.headers.authorization).toBeUndefined()
    expect(server.requests[0]!.headers['x-team']).toBe('rein')
  })

  it('reports an unreachable server as TRANSPORT, in plain words', async () => {
    const { root, server } = await boot([])
    await server.close()
    const root2 = new Context()
    await root2.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
    await root2.plugin(openai, { baseURL: server.url, apiKeyEnv: false, label: 'local' })
    const { finish } = await run(root2)
    expect(finish.failure?.code).toBe('TRANSPORT')
    expect(finish.failure?.message).toMatch(/^could not reach local: connection refused at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(ECONNREFUSED\)/)
    expect(root.llm.providers()).toEqual(['openai'])
  })

  it('applies the model catalog: default budget, efforts, pricing', async () => {
    const models = [{ id: 'gpt-test', maxTokens: 1000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low', pricing: { input: 1, output: 2 } }]
    const { root, server } = await boot([{ steps: [{ text: 'x' }] }], { models, maxTokensField: 'max_completion_tokens' })
    await run(root)
    expect(server.requests[0]!.body).toMatchObject({ max_completion_tokens: 1000, reasoning_effort: 'low' })
    expect((await run(root, { reasoningEffort: 'max' })).finish.failure?.code).toBe('UNSUPPORTED_REASONING_EFFORT')
    expect(root.llm.costOf('openai', 'gpt-test', { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(3)
  })

  it('stops the HTTP request when the caller aborts', async () => {
    const { root } = await boot([{ steps: [{ text: 'first' }, { stall: true }] }])
    const controller = new AbortController()
    const chunks: StreamChunk[] = []
    for await (const chunk of root.llm.stream({ provider: 'openai', model: 'm', messages: [userMessage('hi')], signal: controller.signal })) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } })
  })

  it('registers its route while loaded and removes it when disposed', async () => {
    server = await startMockOpenAiServer([])
    const root = new Context()
    await root.plugin(LlmRuntime)
    const fiber = await root.plugin(openai, { provider: 'local', baseURL: server.url, apiKeyEnv: false })
    expect(root.llm.providers()).toEqual(['local'])
    await fiber.dispose()
    expect(root.llm.providers()).toEqual([])
  })
})

describe('attempt records over HTTP', () => {
  it('records the usage the server reported before an in-stream error, and the response id and model of an answer', async () => {
    const { root } = await boot([
      { steps: [{ text: 'Hal' }, { event: { id: 'chatcmpl-a', choices: [], usage: { prompt_tokens: 50, completion_tokens: 3 } } }, { error: { message: 'model crashed' } }] },
      { id: 'chatcmpl-b', model: 'gpt-test-2026-01-01', steps: [{ text: 'fine' }], usage: { prompt_tokens: 9, completion_tokens: 1 } },
    ])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    expect((await run(root)).finish.failure?.code).toBe('SERVER')
    expect((await run(root)).finish).toEqual({ type: 'finish', reason: 'stop', responseId: 'chatcmpl-b', responseModel: 'gpt-test-2026-01-01' })
    expect(attempts).toEqual([
      expect.objectContaining({ shown: true, finishReason: 'error', usage: { inputTokens: 50, outputTokens: 3 }, failure: { code: 'SERVER', message: 'OpenAI reported an error mid-stream: model crashed' } }),
      expect.objectContaining({ shown: true, finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 1 }, responseId: 'chatcmpl-b', responseModel: 'gpt-test-2026-01-01' }),
    ])
    expect(attempts[0]).not.toHaveProperty('usageEstimated')
  })
})

describe('models config', () => {
  it('knows the context window of the model rein asks OpenAI for by default, so compaction is not off for it; an entry of the same id replaces it', async () => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    await root.plugin(openai, { apiKeyEnv: false })
    expect(root.llm.resolveModel('openai', 'gpt-4o-mini')?.contextWindow).toBe(128_000)
    await root.plugin(openai, { provider: 'small', apiKeyEnv: false, models: [{ id: 'gpt-4o-mini', contextWindow: 8_000 }] })
    expect(root.llm.resolveModel('small', 'gpt-4o-mini')?.contextWindow).toBe(8_000)
  })

  it('accepts entries without pricing and reports a half-written one', async () => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    await root.plugin(openai, { apiKeyEnv: false, models: [{ id: 'a', contextWindow: 8_000 }] })
    expect(root.llm.listModels('openai')).toEqual([...openai.OPENAI_MODELS, { id: 'a', contextWindow: 8_000 }])
    await expect((async () => { await root.plugin(openai, { provider: 'b', models: [{ id: 'b', pricing: { input: 1 } as never }] }) })()).rejects.toThrow(/models\[0\]\.pricing/)
  })
})
