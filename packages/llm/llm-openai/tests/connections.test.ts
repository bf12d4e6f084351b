// Connections over real HTTP: a stream that ended hands its connection to the next request; one the
// server keeps open past `[DONE]` is cut off, and the next request gets a new connection.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const FINISH = 'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'

describe('connections', () => {
  it('sends a run of requests over one kept-alive connection when each stream ends with [DONE]', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'one' }] }, { steps: [{ text: 'two' }] }, { steps: [{ text: 'three' }] }])
    for (const text of ['one', 'two', 'three']) expect((await run(root)).blocks).toEqual([{ type: 'text', text }])
    expect(server.requests.map((request) => request.connection)).toEqual([1, 1, 1])
  })

  it('cuts off a body the server keeps open after [DONE], keeps the answer, and opens a new connection next', async () => {
    const lingering = { steps: [{ text: 'kept' }, { raw: FINISH }, { raw: 'data: [DONE]\n\n' }, { stall: true } as const], finishReason: null, usage: null, done: false }
    const { root, server } = await boot([lingering, { steps: [{ text: 'next' }] }], { streamIdleTimeoutMs: 600_000 })
    const first = await run(root)
    expect(first.blocks).toEqual([{ type: 'text', text: 'kept' }])
    expect(first.finish).toMatchObject({ type: 'finish', reason: 'stop' })
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
    expect((await run(root)).blocks).toEqual([{ type: 'text', text: 'next' }])
    expect(server.requests.map((request) => request.connection)).toEqual([1, 2])
  })
})
