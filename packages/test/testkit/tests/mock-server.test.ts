// The mock server checked against the official `openai` client (6.49.0): whatever it parses, rein's
// adapters must parse too, so the wire here is the real one.

import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, InternalServerError, NotFoundError, RateLimitError } from 'openai'
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions'
import { afterEach, describe, expect, it } from 'vitest'
import { startMockOpenAiServer, type MockScript, type MockServer } from '../src/index.ts'

const servers: MockServer[] = []

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function serve(script: MockScript) {
  const server = await startMockOpenAiServer(script)
  servers.push(server)
  return server
}

function clientFor(server: MockServer, options: { timeout?: number } = {}) {
  return new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0, logLevel: 'off', ...options })
}

const params: ChatCompletionCreateParamsStreaming = {
  model: 'gpt-test',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  stream_options: { include_usage: true },
}

/** Reads the whole stream; `error` is what the client threw, if it did. */
async function read(client: OpenAI, body: ChatCompletionCreateParamsStreaming = params, signal?: AbortSignal) {
  const chunks: ChatCompletionChunk[] = []
  try {
    const stream = await client.chat.completions.create(body, signal ? { signal } : {})
    for await (const chunk of stream) chunks.push(chunk)
  } catch (error) {
    return { chunks, error }
  }
  return { chunks, error: undefined }
}

/** What the model said in each chunk: its delta, finish reason and usage, without the envelope. */
const deltas = (chunks: readonly ChatCompletionChunk[]) => chunks.map((chunk) => ({
  delta: chunk.choices[0]?.delta,
  finish: chunk.choices[0]?.finish_reason,
  usage: chunk.usage,
}))

const envelope = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-test', system_fingerprint: 'fp_mock' }

describe('startMockOpenAiServer streams', () => {
  it('streams text as the client parses it: role chunk, content, finish, then the usage chunk', async () => {
    const server = await serve([{ steps: [{ text: 'Hello' }, { text: ' world' }], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }])
    const { chunks, error } = await read(clientFor(server))
    expect(error).toBe(undefined)
    const choice = (delta: object, finishReason: string | null = null) => ({ ...envelope, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null })
    expect(chunks).toEqual([
      choice({ role: 'assistant', content: '', refusal: null }),
      choice({ content: 'Hello' }),
      choice({ content: ' world' }),
      choice({}, 'stop'),
      { ...envelope, choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } },
    ])
  })

  it('sends no usage chunk when the request did not ask for usage', async () => {
    const server = await serve([{ steps: [{ text: 'ok' }] }])
    const { chunks } = await read(clientFor(server), { ...params, stream_options: null })
    expect(deltas(chunks)).toEqual([
      { delta: { role: 'assistant', content: '', refusal: null }, finish: null, usage: undefined },
      { delta: { content: 'ok' }, finish: null, usage: undefined },
      { delta: {}, finish: 'stop', usage: undefined },
    ])
  })

  it('interleaves two tool calls by index, and the official accumulator assembles both', async () => {
    const script: MockScript = () => ({
      steps: [
        { toolCall: { id: 'call_a', name: 'read_file', arguments: '{"path":' } },
        { toolCall: { id: 'call_b', name: 'list_dir', arguments: ['{"dir":'] } },
        { toolArguments: { id: 'call_a', arguments: '"a.md"}' } },
        { toolArguments: { id: 'call_b', arguments: ['"sr', 'c"}'] } },
      ],
    })
    const server = await serve(script)
    const client = clientFor(server)
    const { chunks } = await read(client)
    expect(deltas(chunks).slice(1, -1)).toEqual([
      { delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 1, function: { arguments: '{"dir":' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '"a.md"}' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 1, function: { arguments: '"sr' } }] }, finish: null, usage: null },
      { delta: { tool_calls: [{ index: 1, function: { arguments: 'c"}' } }] }, finish: null, usage: null },
      { delta: {}, finish: 'tool_calls', usage: null },
    ])
    const final = await client.chat.completions.stream(params).finalChatCompletion()
    expect(final.choices[0]?.finish_reason).toBe('tool_calls')
    expect(final.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.md"}' } },
      { id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{"dir":"src"}' } },
    ])
  })

  it('passes reasoning_content through, with DeepSeek chunk shapes and usage on the finish chunk', async () => {
    const usage = { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240, prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 176 }
    const server = await serve([{ dialect: 'deepseek', steps: [{ reasoning: 'The user wants' }, { reasoning: ' a greeting.' }, { text: 'Hi!' }], usage }])
    const { chunks } = await read(clientFor(server), { ...params, model: 'deepseek-chat', stream_options: null })
    expect(deltas(chunks)).toEqual([
      { delta: { role: 'assistant', content: null, reasoning_content: '' }, finish: null, usage: undefined },
      { delta: { content: null, reasoning_content: 'The user wants' }, finish: null, usage: undefined },
      { delta: { content: null, reasoning_content: ' a greeting.' }, finish: null, usage: undefined },
      { delta: { content: 'Hi!', reasoning_content: null }, finish: null, usage: undefined },
      { delta: {}, finish: 'stop', usage },
    ])
  })

  it('puts usage on the finish chunk for usageIn finish-chunk, with the request asking for usage', async () => {
    const usage = { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33, prompt_cache_hit_tokens: 20, prompt_cache_miss_tokens: 10 }
    const server = await serve([{ steps: [{ text: 'ok' }], usage, usageIn: 'finish-chunk' }])
    const { chunks } = await read(clientFor(server))
    expect(deltas(chunks).slice(1)).toEqual([
      { delta: { content: 'ok' }, finish: null, usage: null },
      { delta: {}, finish: 'stop', usage },
    ])
  })

  it('sends keep-alive comments, before the role chunk too, and the client skips them', async () => {
    const server = await serve([{ steps: [{ keepAlive: true }, { keepAlive: true }, { text: 'ok' }, { keepAlive: true }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(error).toBe(undefined)
    expect(deltas(chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'ok' }, {}, undefined])
  })

  it('keeps multi-byte UTF-8 intact when the response is cut into 3-byte writes', async () => {
    const text = ['héllo ', 'wörld ', '🙂👩‍💻', ' 日本語']
    const server = await serve([{ steps: text.map((part) => ({ text: part })), chunkBytes: 3 }])
    const { chunks } = await read(clientFor(server))
    expect(chunks.flatMap((chunk) => chunk.choices[0]?.delta.content ? [chunk.choices[0].delta.content] : [])).toEqual(text)
  })

  it('uses the finish reason the reply names', async () => {
    const server = await serve([{ steps: [{ text: 'cut' }], finishReason: 'length' }])
    const { chunks } = await read(clientFor(server))
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, null, 'length', undefined])
  })

  it('ends with no finish chunk, usage or [DONE] when the reply leaves them out', async () => {
    const server = await serve([{ steps: [{ text: 'partial' }], finishReason: null, usage: null, done: false }])
    const { chunks, error } = await read(clientFor(server))
    expect(error).toBe(undefined)
    expect(deltas(chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'partial' }])
  })
})

describe('startMockOpenAiServer faults', () => {
  it('answers 429 with retry-after, which the client surfaces as a RateLimitError', async () => {
    const server = await serve([{
      kind: 'error', status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded',
      headers: { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0' },
    }])
    const { error } = await read(clientFor(server))
    expect(error).toBeInstanceOf(RateLimitError)
    const failure = error as RateLimitError
    expect([failure.status, failure.headers?.get('retry-after'), failure.code, failure.type, failure.requestID, failure.message]).toEqual([
      429, '7', 'rate_limit_exceeded', 'requests', 'mock-req-1', '429 Rate limit reached',
    ])
  })

  it.each([500, 503, 529])('answers %i, which the client surfaces as an InternalServerError', async (status) => {
    const server = await serve([{ kind: 'error', status, message: 'Server overloaded' }])
    const { error } = await read(clientFor(server))
    expect(error).toBeInstanceOf(InternalServerError)
    expect([(error as APIError).status, (error as APIError).type, (error as APIError).message]).toEqual([status, 'server_error', `${status} Server overloaded`])
  })

  it('sends an in-stream error event, which the client throws as an APIError without status', async () => {
    const server = await serve([{ steps: [{ text: 'Hel' }, { error: { message: 'the model crashed' } }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(deltas(chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Hel' }])
    expect(error).toBeInstanceOf(APIError)
    expect([(error as APIError).status, (error as APIError).type, (error as APIError).message]).toEqual([undefined, 'server_error', 'the model crashed'])
  })

  it('writes a raw step as it is, and the client throws on malformed JSON', async () => {
    const server = await serve([{ steps: [{ text: 'Hel' }, { raw: 'data: {"choices": [\n\n' }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(chunks).toHaveLength(2)
    expect(error).toBeInstanceOf(SyntaxError)
  })

  it('disconnects mid-stream after the chunks before it arrived, and the client throws', async () => {
    const server = await serve([{ steps: [{ text: 'Hel' }, { disconnect: true }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(deltas(chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Hel' }])
    expect(error).toMatchObject({ name: 'TypeError', message: 'terminated', cause: { code: 'UND_ERR_SOCKET' } })
  })

  it('disconnects before any response as a first step, which the client reports as a connection error', async () => {
    const server = await serve([{ steps: [{ disconnect: true }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(chunks).toEqual([])
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError)
  })

  it('stalls mid-stream until the caller aborts, and the client then ends the stream quietly', async () => {
    const server = await serve([{ steps: [{ text: 'Hel' }, { stall: true }, { text: 'lo' }] }])
    const controller = new AbortController()
    const chunks: ChatCompletionChunk[] = []
    const stream = await clientFor(server).chat.completions.create(params, { signal: controller.signal })
    for await (const chunk of stream) {
      chunks.push(chunk)
      if (chunk.choices[0]?.delta.content === 'Hel') controller.abort()
    }
    expect(deltas(chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Hel' }])
  })

  it('stalls before the headers as a first step, so the client request timeout fires', async () => {
    const server = await serve([{ steps: [{ stall: true }, { text: 'never' }] }])
    const { chunks, error } = await read(clientFor(server, { timeout: 50 }))
    expect(chunks).toEqual([])
    expect(error).toBeInstanceOf(APIConnectionTimeoutError)
    expect(server.requests).toHaveLength(1)
  })
})

describe('startMockOpenAiServer requests', () => {
  it('records method, path, headers and the parsed body of each request', async () => {
    const server = await serve([{ steps: [{ text: 'one' }] }, { steps: [{ text: 'two' }] }])
    const client = clientFor(server)
    await read(client)
    await read(client, { ...params, messages: [{ role: 'user', content: 'again' }] })
    expect(server.requests.map((request) => [request.method, request.path, request.body])).toEqual([
      ['POST', '/v1/chat/completions', params],
      ['POST', '/v1/chat/completions', { ...params, messages: [{ role: 'user', content: 'again' }] }],
    ])
    expect(server.requests[0]!.headers).toMatchObject({ 'authorization': 'Bearer test', 'content-type': 'application/json', 'accept': 'application/json' })
    expect(JSON.parse(server.requests[0]!.raw)).toEqual(params)
  })

  it('answers 404 for an unknown route without taking a reply from the script', async () => {
    const server = await serve([{ steps: [{ text: 'first reply' }] }])
    const client = clientFor(server)
    const error = await client.models.list().then(() => undefined, (thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(NotFoundError)
    expect([(error as NotFoundError).status, (error as NotFoundError).message]).toEqual([404, '404 no route for GET /v1/models'])
    const { chunks } = await read(client)
    expect(chunks[1]?.choices[0]?.delta.content).toBe('first reply')
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions'])
  })

  it('answers 500 naming the request once the script has no reply left', async () => {
    const server = await serve([])
    const { error } = await read(clientFor(server))
    expect(error).toBeInstanceOf(InternalServerError)
    expect((error as APIError).message).toBe('500 the mock script has no reply for request #1')
  })

  it('answers 500 with the reason when a script function throws', async () => {
    const server = await serve(() => {
      throw new Error('unexpected request')
    })
    const { error } = await read(clientFor(server))
    expect((error as APIError).message).toBe('500 the mock script failed on request #1: Error: unexpected request')
  })

  it('ends the stream with an in-stream error naming the bug when toolArguments names an unsent call', async () => {
    const server = await serve([{ steps: [{ text: 'a' }, { toolArguments: { id: 'call_x', arguments: '{}' } }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(chunks).toHaveLength(2)
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).message).toBe('the mock server failed: Error: toolArguments for "call_x", which no earlier toolCall step sent')
  })

  it('forgets its requests on reset and plays the new script from its start, on the same address', async () => {
    const server = await serve([{ steps: [{ text: 'first' }] }])
    await read(clientFor(server))
    const url = server.url
    server.reset([{ kind: 'error', status: 503, message: 'second script' }])
    expect(server.requests).toEqual([])
    const { error } = await read(clientFor(server))
    expect((error as APIError).status).toBe(503)
    expect([server.url, server.requests.length, server.requests[0]!.headers['content-type']]).toEqual([url, 1, 'application/json'])
    server.reset()
    expect((await read(clientFor(server))).error).toBeInstanceOf(InternalServerError)
  })

  it('passes each request and its position to a script function', async () => {
    const seen: [unknown, number][] = []
    const server = await serve((request, index) => {
      seen.push([(request.body as { model: string }).model, index])
      return { steps: [{ text: `reply ${index}` }] }
    })
    const client = clientFor(server)
    await read(client, { ...params, model: 'a' })
    await read(client, { ...params, model: 'b' })
    expect(seen).toEqual([['a', 0], ['b', 1]])
  })
})

/** A raw POST, for faults the official client hides. */
function post(server: MockServer, signal?: AbortSignal) {
  return fetch(`${server.url}/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params), ...(signal ? { signal } : {}),
  })
}

describe('startMockOpenAiServer body faults and reply records', () => {
  it('records a finished reply as not closed early, with the bytes it wrote', async () => {
    const server = await serve([{ kind: 'error', status: 500, body: 'plain failure' }])
    const response = await post(server)
    expect([response.status, await response.text()]).toEqual([500, 'plain failure'])
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply).toMatchObject({ bytesWritten: 13, clientClosedEarly: false })
  })

  it('stalls inside an error body: status, headers and part of the body, then nothing until the client gives up', async () => {
    const server = await serve([{ kind: 'error', status: 500, message: 'upstream exploded', stallAfterBytes: 10 }])
    const controller = new AbortController()
    const response = await post(server, controller.signal)
    expect([response.status, response.headers.get('content-type')]).toEqual([500, 'application/json'])
    const reader = response.body!.getReader()
    const first = await reader.read()
    expect(new TextDecoder().decode(first.value)).toBe('{"error":{')
    const next = reader.read().then(() => 'more', () => 'aborted')
    controller.abort()
    expect(await next).toBe('aborted')
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply).toMatchObject({ bytesWritten: 10, clientClosedEarly: true })
  })

  it('answers 200 text/html, whole or stalling after the headers', async () => {
    const server = await serve([{ kind: 'http' }, { kind: 'http', stallAfterBytes: 0 }])
    const page = await post(server)
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8'])
    expect(await page.text()).toContain('<html>')
    const controller = new AbortController()
    const stalled = await post(server, controller.signal)
    expect(stalled.status).toBe(200)
    await stalled.body!.cancel()
    await server.requests[1]!.reply.settled
    expect(server.requests[1]!.reply).toMatchObject({ bytesWritten: 0, clientClosedEarly: true })
  })

  it('streams a 200 MB error body without building it, and shows that the client stopped reading', async () => {
    const size = 200 * 1024 * 1024
    const server = await serve([{ kind: 'error', status: 502, message: 'bad gateway', bodyBytes: size }])
    const response = await post(server)
    expect(response.headers.get('content-length')).toBe(String(size))
    const reader = response.body!.getReader()
    let received = 0
    while (received < 64 * 1024) received += (await reader.read()).value?.length ?? 0
    await reader.cancel()
    await server.requests[0]!.reply.settled
    const { reply } = server.requests[0]!
    expect(reply.clientClosedEarly).toBe(true)
    expect(reply.bytesWritten).toBeLessThan(size / 4)
  })
})

describe('startMockOpenAiServer filler steps', () => {
  it('pads a stream with comment lines the client skips, whatever their size, and sends the text after them', async () => {
    const size = 1024 * 1024 + 5
    const server = await serve([{ steps: [{ filler: { bytes: size } }, { text: 'after' }, { filler: { bytes: 1 } }] }])
    const { chunks, error } = await read(clientFor(server))
    expect(error).toBe(undefined)
    expect(deltas(chunks).map((chunk) => chunk.delta?.content)).toEqual(['', 'after', undefined, undefined])
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.bytesWritten).toBeGreaterThan(size)
  })

  it('streams 200 MB of filler without building it, and stops writing once the client hangs up', async () => {
    const size = 200 * 1024 * 1024
    const server = await serve([{ steps: [{ filler: { bytes: size, as: 'event' } }, { text: 'never read' }] }])
    const response = await post(server)
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first.startsWith('data: ')).toBe(true)
    let received = first.length
    while (received < 256 * 1024) received += (await reader.read()).value?.length ?? 0
    await reader.cancel()
    await server.requests[0]!.reply.settled
    const { reply } = server.requests[0]!
    expect(reply.clientClosedEarly).toBe(true)
    expect(reply.bytesWritten).toBeLessThan(size / 4)
  })
})

describe('startMockOpenAiServer shapes and provider wordings', () => {
  it('sends wrong-shaped chunks by name and any JSON event as given, and the client passes them on', async () => {
    const server = await serve([{ steps: [{ wrongShape: 'null-choice' }, { wrongShape: 'string-delta' }, { event: { anything: [1, 'two'] } }], finishReason: null, usage: null }])
    const { chunks } = await read(clientFor(server))
    expect(chunks.map((chunk) => (chunk as unknown as { choices?: unknown; anything?: unknown }))).toEqual([
      { ...envelope, choices: [null] },
      { ...envelope, choices: [{ index: 0, delta: 'x', logprobs: null, finish_reason: null }] },
      { anything: [1, 'two'] },
    ])
  })

  it('puts the reply id and model on every chunk, and omits a tool call id given as null', async () => {
    const server = await serve([{ id: 'chatcmpl-xyz', model: 'gpt-test-2026-01-01', steps: [{ toolCall: { id: null, name: 'ls', arguments: '{}' } }] }])
    const { chunks } = await read(clientFor(server))
    expect(new Set(chunks.map((chunk) => `${chunk.id} ${chunk.model}`))).toEqual(new Set(['chatcmpl-xyz gpt-test-2026-01-01']))
    expect(chunks[1]?.choices[0]?.delta.tool_calls).toEqual([{ index: 0, type: 'function', function: { name: 'ls', arguments: '' } }])
  })

  it.each([
    ['openai', 400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9739 tokens. Please reduce the length of the messages."],
    ['deepseek', 400, "This model's maximum context length is 8192 tokens. However, you requested 10739 tokens (9739 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."],
    ['llama.cpp', 400, 'request (9739 tokens) exceeds the available context size (8192 tokens), try increasing it'],
    ['vllm', 400, 'The decoder prompt (length 9739) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.'],
    ['ollama', 400, 'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length'],
  ] as const)('words a context overflow as %s does, as a status and in the stream', async (kind, status, message) => {
    const server = await serve([{ kind: 'context-overflow', server: kind }, { kind: 'context-overflow', server: kind, inStream: true, steps: [{ text: 'Hel' }] }])
    const client = clientFor(server)
    const byStatus = await read(client)
    expect([(byStatus.error as APIError).status, (byStatus.error as APIError).message]).toEqual([status, `${status} ${message}`])
    const inStream = await read(client)
    expect(deltas(inStream.chunks).map((chunk) => chunk.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Hel' }])
    expect([(inStream.error as APIError).status, (inStream.error as APIError).message]).toEqual([undefined, message])
  })

  it.each([
    ['openai', 404, 'The model `gpt-test` does not exist or you do not have access to it.'],
    ['deepseek', 400, 'Model Not Exist'],
    ['llama.cpp', 400, 'model not found'],
    ['vllm', 404, 'The model `gpt-test` does not exist.'],
    ['ollama', 404, "model 'gpt-test' not found"],
  ] as const)('answers a model it does not serve as %s does', async (kind, status, message) => {
    const server = await serve([{ kind: 'model-not-found', server: kind }])
    const { error } = await read(clientFor(server))
    expect([(error as APIError).status, (error as APIError).message]).toEqual([status, `${status} ${message}`])
  })
})
