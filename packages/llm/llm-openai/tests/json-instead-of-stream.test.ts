// Found by the audit (t03-midstream, "json instead of stream"): a 200 application/json chat completion
// sent in answer to `stream: true` was rejected with "is <url> its API's base URL?", although the base
// URL was right: the server ignored `stream`, which the message must say.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const message = { role: 'assistant', content: 'Answer' }
const completion = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [{ index: 0, message, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }
const json = (body: unknown, contentType = 'application/json') => ({ kind: 'http' as const, status: 200, contentType, body: JSON.stringify(body) })

describe('a whole chat completion in answer to stream: true', () => {
  it.each([
    ['OpenAI\'s shape', json(completion)],
    ['a charset in the content type', json(completion, 'application/json; charset=utf-8')],
    ['choices without an object field', json({ id: 'c', choices: [{ index: 0, message, finish_reason: 'stop' }] })],
    ['an object field without choices', json({ id: 'c', object: 'chat.completion' })],
    ['one longer than is read (cut, so no JSON)', json({ ...completion, choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(200_000) }, finish_reason: 'stop' }] })],
  ])('says the server answered without streaming, not to check the base URL: %s', async (_case, reply) => {
    const { root, server } = await boot([reply, { steps: [{ text: 'never' }] }])
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE', status: 200, requestId: 'mock-req-1' })
    expect(finish.failure?.message).toMatch(/^OpenAI answered with a whole chat completion \(HTTP 200, application\/json[^)]*\), not streamed, although rein asked for a stream \(stream: true\): rein needs a server that streams, or the setting on it that makes it stream$/)
    expect(server.requests).toHaveLength(1)
  })

  it('says so by the start of a body that stalls, once the idle limit passes', async () => {
    const { root } = await boot([{ ...json(completion), stallAfterBytes: 60 }], { streamIdleTimeoutMs: 300 })
    const { finish } = await run(root)
    expect(finish.failure?.message).toContain('although rein asked for a stream (stream: true)')
  })
})

describe('other answers that are not an event stream', () => {
  it('read an error object a gateway sent with HTTP 200 as that error, in its words (not the base-URL hint)', async () => {
    const { root, server } = await boot([json({ error: { message: 'Insufficient Balance', type: 'unknown_error' } }), json({ error: { message: 'Insufficient Balance', type: 'unknown_error' } })])
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'QUOTA', message: 'OpenAI sent an error in place of an event stream: Insufficient Balance' })
    expect(server.requests).toHaveLength(1)
  })

  it.each([
    ['a model list', { object: 'list', data: [{ id: 'gpt-test', object: 'model' }] }, '{"object":"list","data":[{"id":"gpt-test","object":"model"}]}'],
  ])('keep the base-URL hint for other JSON, quoting how it began: %s', async (_case, body, quoted) => {
    const { root, server } = await boot([json(body)])
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE', status: 200 })
    expect(finish.failure?.message).toBe(`OpenAI answered HTTP 200 with application/json instead of an event stream; is ${server.url} its API's base URL? (requests go to ${server.url}/chat/completions); it began ${JSON.stringify(quoted)}`)
  })

  it('keep the base-URL hint for an HTML page', async () => {
    const { root, server } = await boot([{ kind: 'http', status: 200 }])
    const { finish } = await run(root)
    expect(finish.failure?.message).toBe(`OpenAI answered HTTP 200 with text/html; charset=utf-8 instead of an event stream; is ${server.url} its API's base URL? (requests go to ${server.url}/chat/completions)`)
  })

  it('never quote a credential the server echoes', async () => {
    const list = await boot([json({ object: 'list', data: [{ id: `key ${KEY}` }] })])
    const listed = await run(list.root)
    expect(listed.finish.failure?.message).toContain('it began')
    expect(listed.finish.failure?.message).not.toContain(KEY)
    const { root } = await boot([json({ error: { message: `bad key ${KEY}`, type: 'invalid_request_error' } })])
    const { finish } = await run(root)
    expect(finish.failure?.message).toContain('bad key')
    expect(finish.failure?.message).not.toContain(KEY)
  })
})
