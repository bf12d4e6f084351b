// Found by the audit (s50-sloppy-server): what a sloppy or hostile OpenAI-compatible server sends,
// driven through the runtime against the testkit's mock server. Each describe names the symptom.
import { createServer, type Server } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MockReply } from '@rein/testkit'
import { boot, bootAt, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const sse = (body: string): MockReply => ({ kind: 'http', status: 200, contentType: 'text/event-stream', body })
const event = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`
const delta = (fields: Record<string, unknown>, finish: string | null = null) => event({ id: 'r1', choices: [{ index: 0, delta: fields, finish_reason: finish }] })
const END = `${delta({}, 'stop')}data: [DONE]\n\n`

describe('an empty data: line failed the whole answer as MALFORMED_RESPONSE', () => {
  it.each([['data:'], ['data: '], ['data:\r']])('is skipped as carrying nothing, and the answer streams on (%j)', async (line) => {
    const { root } = await boot(() => sse(`${delta({ content: 'a' })}${line}\n\n${delta({ content: 'b' })}${END}`), {}, { maxRetries: 0 })
    const { finish, blocks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: 'ab' }])
  })
})

describe('a refusal was dropped, and the answer failed as EMPTY_RESPONSE', () => {
  it("shows the model's refusal as the answer's text", async () => {
    const refusal = "I'm sorry, I can't help with that."
    const body = `${delta({ role: 'assistant', content: null, refusal: null })}${delta({ refusal: refusal.slice(0, 10) })}${delta({ refusal: refusal.slice(10) })}${END}`
    const { root } = await boot(() => sse(body), {}, { maxRetries: 0 })
    const { finish, blocks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: refusal }])
  })

  it('fails a refusal of the wrong type as MALFORMED_RESPONSE, naming the field', async () => {
    const { root } = await boot(() => sse(`${delta({ refusal: 7 })}${END}`), {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE' })
    expect(finish.failure?.message).toContain('choices[0].delta.refusal')
  })
})

describe('an error object at the top level of a stream event lost its words as "neither choices nor usage"', () => {
  it.each([
    ["vLLM's top-level error", event({ object: 'error', message: 'temperature must be non-negative', type: 'BadRequestError', code: 400 }), 'INVALID_REQUEST', 'temperature must be non-negative'],
    ['an event: error with a status code', `event: error\n${event({ message: 'upstream overloaded', code: 529 })}`, 'OVERLOADED', 'upstream overloaded'],
    ['a balance error', event({ message: 'Insufficient Balance', type: 'unknown_error' }), 'QUOTA', 'Insufficient Balance'],
  ])('is that error, in its words: %s', async (_case, error, code, said) => {
    const { root } = await boot(() => sse(`${delta({ content: 'partial' })}${error}`), {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure).toEqual({ code, message: `OpenAI reported an error mid-stream: ${said}` })
  })

  it('still fails an event with neither choices, usage nor an error as MALFORMED_RESPONSE', async () => {
    const { root } = await boot(() => sse(`${event({ id: 'r1', object: 'chat.completion.chunk' })}${END}`), {}, { maxRetries: 0 })
    expect((await run(root)).finish.failure?.code).toBe('MALFORMED_RESPONSE')
  })
})

// Not shaped like `sk-…`, and holding a `/`, which JSON may escape (`\/`) and a URL encodes (`%2F`).
const SLASHED_KEY = 'Zq7pl/ainSecret0123456789'
const escaped = JSON.stringify(`Bearer ${SLASHED_KEY}`).replaceAll('/', '\\/')

describe('the key reached the error when the server echoed it escaped, encoded or in a header', () => {
  it.each<[string, MockReply]>([
    ['a JSON error body that escapes "/"', { kind: 'http', status: 401, contentType: 'application/json', body: `{"error":{"message":${escaped}}}` }],
    ['a JSON body of echoed headers', { kind: 'http', status: 400, contentType: 'application/json', body: `{"headers":{"authorization":${escaped}}}` }],
    ['a JSON error sent with 200', { kind: 'http', status: 200, contentType: 'application/json', body: `{"error":{"message":${escaped}}}` }],
    ['a bare error in an event stream', { kind: 'http', status: 200, contentType: 'text/event-stream', body: `{"error":{"message":${escaped}}}` }],
    ['a percent-encoded query', { kind: 'http', status: 401, contentType: 'text/plain', body: `rejected ?key=${encodeURIComponent(SLASHED_KEY)}` }],
    ['the x-request-id header', { kind: 'error', status: 500, message: 'boom', headers: { 'x-request-id': `req-${SLASHED_KEY}` } }],
    ['the content type of a 200', { kind: 'http', status: 200, contentType: `text/plain; key=${SLASHED_KEY}`, body: 'x' }],
    ['the location of a redirect', { kind: 'http', status: 302, body: '', headers: { location: `https://elsewhere.example/v1/${SLASHED_KEY}` } }],
  ])('never shows it, in any form: %s', async (_case, reply) => {
    process.env.REIN_TEST_OPENAI_KEY = SLASHED_KEY
    const { root } = await boot(() => reply, {}, { maxRetries: 0 })
    const { finish, events } = await run(root)
    expect(finish.failure).toBeDefined()
    const shown = JSON.stringify({ finish, events })
    for (const form of [SLASHED_KEY, SLASHED_KEY.replace('/', '\\/'), encodeURIComponent(SLASHED_KEY), 'ainSecret0123456789']) expect(shown).not.toContain(form)
  })
})

describe('a huge error message was passed on whole', () => {
  const huge = `upstream failed: ${'x'.repeat(1_000_000)}`
  it.each<[string, MockReply]>([
    ['in an HTTP error body', { kind: 'error', status: 500, message: huge.slice(0, 60_000) }],
    ['in an error event', sse(`${delta({ content: 'a' })}${event({ error: { message: huge } })}`)],
    ['as a string error event', sse(event({ error: huge }))],
  ])('keeps a bounded head of it: %s', async (_case, reply) => {
    const { root } = await boot(() => reply, {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure?.message).toContain('upstream failed: xxx')
    expect(finish.failure?.message.length).toBeLessThan(1000)
  })
})

describe('tool calls a server sent whole, one per event, without ids or indexes, were merged into one call', () => {
  const call = (name: string, args: unknown) => delta({ tool_calls: [{ type: 'function', function: { name, arguments: args } }] })
  const calls = (run_: Awaited<ReturnType<typeof run>>) => run_.blocks.map((block) => block.type === 'tool-call' ? [block.name, block.arguments] : block)

  it.each([
    ['different tools', [call('get_weather', '{"city":"Paris"}'), call('get_time', '{}')], [['get_weather', '{"city":"Paris"}'], ['get_time', '{}']]],
    ['the same tool twice', [call('get_weather', '{"city":"Paris"}'), call('get_weather', '{"city":"Rome"}')], [['get_weather', '{"city":"Paris"}'], ['get_weather', '{"city":"Rome"}']]],
    ['arguments sent as objects', [call('a', { x: 1 }), call('b', { y: 2 })], [['a', '{"x":1}'], ['b', '{"y":2}']]],
  ])('keeps them apart: %s', async (_case, events, expected) => {
    const { root } = await boot(() => sse(`${events.join('')}${delta({}, 'tool_calls')}data: [DONE]\n\n`), {}, { maxRetries: 0 })
    const result = await run(root)
    expect(result.finish).toMatchObject({ reason: 'tool-calls' })
    expect(calls(result)).toEqual(expected)
    expect(new Set(result.blocks.map((block) => block.type === 'tool-call' && block.id)).size).toBe(expected.length)
  })

  it('gives two whole calls the server sent under one id distinct ids, so their results pair up', async () => {
    const same = (name: string) => delta({ tool_calls: [{ index: 0, id: 'call_same', type: 'function', function: { name, arguments: '{}' } }] })
    const { root } = await boot(() => sse(`${same('a')}${same('b')}${delta({}, 'tool_calls')}data: [DONE]\n\n`), {}, { maxRetries: 0 })
    const result = await run(root)
    expect(calls(result)).toEqual([['a', '{}'], ['b', '{}']])
    const ids = result.blocks.map((block) => block.type === 'tool-call' ? block.id : '')
    expect(ids[0]).toBe('call_same')
    expect(ids[1]).not.toBe('call_same')
  })

  it('still reads one call from a relay that repeats the name on every argument piece', async () => {
    const events = [call('get_weather', ''), call('get_weather', '{"city":'), call('get_weather', '"Paris"}'), call('get_weather', '')]
    const { root } = await boot(() => sse(`${events.join('')}${delta({}, 'tool_calls')}data: [DONE]\n\n`), {}, { maxRetries: 0 })
    expect(calls(await run(root))).toEqual([['get_weather', '{"city":"Paris"}']])
  })
})

describe('a server that answers with bytes that are no HTTP was reported as "could not reach" it, in the parser\'s words', () => {
  let server: Server | undefined
  afterEach(() => {
    server?.close()
    server = undefined
  })

  /** A TCP server that answers every request with `reply` and closes; its base URL. */
  async function answering(reply: string): Promise<{ baseURL: string; connections: () => number }> {
    let connections = 0
    server = createServer((socket) => {
      connections++
      socket.on('error', () => {})
      socket.once('data', () => socket.end(reply))
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    return { baseURL: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, connections: () => connections }
  }

  it('says the answer was not HTTP and asks whether baseURL is the API, without retrying', async () => {
    const { baseURL, connections } = await answering('SSH-2.0-OpenSSH_9.6\r\n')
    const root = await bootAt(baseURL, {}, 2)
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'TRANSPORT', permanent: true })
    expect(finish.failure?.message).toMatch(/^127\.0\.0\.1:\d+ answered with something that is not HTTP at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(HPE_INVALID_CONSTANT\); is baseURL the API's address, with the right scheme\?$/)
    expect(connections()).toBe(1)
  })

  it('says the response headers were too large to read', async () => {
    const { baseURL } = await answering(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-big: ${'a'.repeat(100_000)}\r\n\r\n`)
    const { finish } = await run(await bootAt(baseURL))
    expect(finish.failure?.code).toBe('TRANSPORT')
    expect(finish.failure?.message).toMatch(/^127\.0\.0\.1:\d+ sent response headers larger than Node reads \(16 KiB by default, --max-http-header-size\) at http:.* \(HPE_HEADER_OVERFLOW\)$/)
  })
})
