// Found by the audit (t12-sse-json-body): a 200 text/event-stream whose body is a bare JSON error,
// without `data:` framing (as some gateways send a balance error), was retried as STREAM_CLOSED and
// the server's message was lost: the SSE parser skipped the lines it could not read.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const sse = (body: string) => ({ kind: 'http' as const, status: 200, contentType: 'text/event-stream', body })
const error = (fields: Record<string, unknown>) => JSON.stringify({ error: fields })

describe('an event stream whose body is a bare error object', () => {
  it.each([
    ['a balance error', error({ message: 'Insufficient Balance', type: 'insufficient_balance' }), 'QUOTA', 1, 'Insufficient Balance'],
    ['a quota error', error({ message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' }), 'QUOTA', 1, 'You exceeded your current quota'],
    ["DeepSeek's balance error, typed unknown_error", error({ message: 'Insufficient Balance', type: 'unknown_error', param: null, code: 'invalid_request_error' }), 'QUOTA', 1, 'Insufficient Balance'],
    ['an error whose code is a status (402)', error({ message: 'payment required upstream', code: 402 }), 'QUOTA', 1, 'payment required upstream'],
    ['a rate limit', error({ message: 'Rate limit reached for requests', type: 'rate_limit_error' }), 'RATE_LIMIT', 3, 'Rate limit reached for requests'],
    ['a context overflow', error({ message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded' }), 'CONTEXT_WINDOW_EXCEEDED', 1, "This model's maximum context length is 8192 tokens"],
    ["vLLM's older top-level error", JSON.stringify({ object: 'error', message: 'temperature must be non-negative', type: 'BadRequestError', code: 400 }), 'INVALID_REQUEST', 1, 'temperature must be non-negative'],
    ['a bare string error', JSON.stringify({ error: 'upstream model crashed' }), 'SERVER', 3, 'upstream model crashed'],
    ['a pretty-printed error', JSON.stringify({ error: { message: 'Insufficient Balance', type: 'insufficient_balance' } }, null, 2), 'QUOTA', 1, 'Insufficient Balance'],
    ['an error after keep-alive comments and blank lines', `: keep-alive\n\n\n${error({ message: 'Insufficient Balance', type: 'insufficient_balance' })}\n`, 'QUOTA', 1, 'Insufficient Balance'],
    ['an error under a CRLF body', `${JSON.stringify({ error: { message: 'Insufficient Balance', type: 'insufficient_balance' } }, null, 2).replaceAll('\n', '\r\n')}\r\n`, 'QUOTA', 1, 'Insufficient Balance'],
  ])('is mapped as an error body, with its message, not retried as STREAM_CLOSED: %s', async (_case, body, code, requests, said) => {
    const { root, server } = await boot(() => sse(body))
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe(code)
    expect(finish.failure?.message).toBe(`OpenAI sent an error in place of an event stream: ${said}`)
    expect(server.requests).toHaveLength(requests)
  })

  it('is classified as the same error inside the stream would be: a balance error is QUOTA there too', async () => {
    const { root, server } = await boot([{ steps: [{ error: { message: 'Insufficient Balance', type: 'unknown_error' } }] }, { steps: [{ text: 'never' }] }])
    expect((await run(root)).finish.failure).toEqual({ code: 'QUOTA', message: 'OpenAI reported an error mid-stream: Insufficient Balance' })
    expect(server.requests).toHaveLength(1)
  })

  it('never shows a credential the server echoes in it', async () => {
    const { root } = await boot(() => sse(error({ message: `invalid key Bearer ${KEY}`, type: 'insufficient_balance' })))
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('QUOTA')
    expect(finish.failure?.message).not.toContain(KEY)
  })
})

describe('an event stream whose body holds no events, only other text', () => {
  it.each([
    ['an HTML page', '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\n', '"<html><head><title>502 Bad Gateway</title>'],
    ['plain text', 'Insufficient Balance', '"Insufficient Balance"'],
    ['JSON that is not an error', '{"status":"ok","data":[]}\n', '"{\\"status\\":\\"ok\\",\\"data\\":[]}"'],
    ['binary garbage', '\u0000\u0001 binary \uFFFD garbage without any framing', '"\\u0000\\u0001 binary \uFFFD garbage without any framing"'],
  ])('fails with STREAM_CLOSED naming what it began with, retried as a stream cut short is: %s', async (_case, body, excerpt) => {
    const { root, server } = await boot(() => sse(body))
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('STREAM_CLOSED')
    expect(finish.failure?.message).toMatch(/^OpenAI sent no events in its event stream, only other text; it began /)
    expect(finish.failure?.message).toContain(excerpt)
    expect(server.requests).toHaveLength(3)
  })

  it('says the server answered without streaming when the text is a whole chat completion', async () => {
    const completion = { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Answer' }, finish_reason: 'stop' }] }
    const { root } = await boot(() => sse(JSON.stringify(completion)))
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('MALFORMED_RESPONSE')
    expect(finish.failure?.message).toContain('although rein asked for a stream (stream: true)')
  })

  it('quotes a few hundred characters of a huge body, whatever its size', async () => {
    const line = `${'x'.repeat(1000)}\n`
    const { root } = await boot(() => sse(line.repeat(4096)))
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('STREAM_CLOSED')
    expect(finish.failure?.message.length).toBeLessThan(400)
  })
})

describe('streams the change leaves alone', () => {
  it('still fails a body of only comments and blank lines as STREAM_CLOSED, retried', async () => {
    const { root, server } = await boot(() => ({ steps: [{ keepAlive: true }, { raw: '\n\n\n' }, { keepAlive: true }], finishReason: null, done: false, usage: null }))
    const { finish } = await run(root)
    expect(finish.failure).toEqual({ code: 'STREAM_CLOSED', message: 'OpenAI closed the stream before the model finished' })
    expect(server.requests).toHaveLength(3)
  })

  it('still reads a stream with stray comments, blank lines and a line it does not know', async () => {
    const { root } = await boot([{ steps: [{ keepAlive: true }, { raw: '\n\nnot a field\n\n' }, { text: 'Hello' }, { keepAlive: true }, { raw: '\n' }, { text: ' world' }] }])
    const { finish, blocks } = await run(root)
    expect(finish).toMatchObject({ reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: 'Hello world' }])
  })
})
