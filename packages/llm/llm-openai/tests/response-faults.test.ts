// Servers that misbehave after the status line: stalled and huge bodies, wrong content types,
// wrong-shaped events, and consumers slower than the idle timeout. Real HTTP against the mock server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

/** Blocks the event loop: a consumer doing heavy synchronous work on a chunk. */
function busy(ms: number) {
  const end = Date.now() + ms
  while (Date.now() < end) { /* spin */ }
}

describe('stalled response bodies', () => {
  it('does not hang when a 500 error body stalls: it is SERVER, retried, and says the body stalled', async () => {
    const stalled = { kind: 'error' as const, status: 500, message: 'upstream exploded', stallAfterBytes: 12 }
    const { root, server } = await boot([stalled, stalled], { streamIdleTimeoutMs: 300 }, { maxRetries: 1 })
    const { finish, events } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'SERVER', status: 500, requestId: 'mock-req-2' })
    expect(finish.failure?.message).toMatch(/^OpenAI returned HTTP 500: .*the error body stalled after 12 bytes/)
    expect(events.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && event.failure.code)).toEqual(['SERVER'])
    expect(server.requests).toHaveLength(2)
  })

  it('keeps a stalled error body\'s status classification: a 429 stays RATE_LIMIT with its Retry-After', async () => {
    const { root } = await boot([{ kind: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '2' }, stallAfterBytes: 0 }], { streamIdleTimeoutMs: 300 }, { maxRetries: 0 })
    expect((await run(root)).finish.failure).toMatchObject({ code: 'RATE_LIMIT', status: 429, retryAfterMs: 2000 })
  })

  it('fails a 200 text/html at once with MALFORMED_RESPONSE, without waiting for its stalled body', async () => {
    const { root, server } = await boot([{ kind: 'http', stallAfterBytes: 20 }], { streamIdleTimeoutMs: 600_000 })
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE', status: 200 })
    expect(finish.failure?.message).toContain('text/html')
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
    expect(server.requests).toHaveLength(1)
  })

  it('does not hang when the caller aborts while an error body stalls', async () => {
    const { root } = await boot([{ kind: 'error', status: 503, message: 'x', stallAfterBytes: 5 }], { streamIdleTimeoutMs: 600_000 })
    const controller = new AbortController()
    const done = run(root, { signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    expect((await done).finish).toMatchObject({ reason: 'aborted', failure: { code: 'ABORTED' } })
  })
})

describe('huge error bodies', () => {
  it('reads at most 64 KiB of a 200 MB error body and then hangs up', async () => {
    const size = 200 * 1024 * 1024
    const { root, server } = await boot([{ kind: 'error', status: 400, message: 'bad request, and a lot of it', bodyBytes: size }], {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: 'OpenAI returned HTTP 400: bad request, and a lot of it' })
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
    expect(server.requests[0]!.reply.bytesWritten).toBeLessThan(8 * 1024 * 1024)
  })
})

describe('slow consumers', () => {
  const steps = [{ text: 'one' }, { delayMs: 5 }, { text: 'two' }, { delayMs: 5 }, { text: 'three' }]

  it('does not time out a healthy stream while the consumer awaits longer than the idle timeout', async () => {
    const { root } = await boot([{ steps }], { streamIdleTimeoutMs: 150 }, { maxRetries: 0 })
    const { finish, blocks } = await run(root, {}, (chunk) => chunk.type === 'text-delta' ? new Promise((resolve) => setTimeout(resolve, 400)) : undefined)
    expect(finish.failure).toBeUndefined()
    expect(blocks).toEqual([{ type: 'text', text: 'onetwothree' }])
  })

  it('does not time out a healthy stream while the consumer blocks the event loop longer than the idle timeout', async () => {
    const { root } = await boot([{ steps }], { streamIdleTimeoutMs: 150 }, { maxRetries: 0 })
    const { finish, blocks } = await run(root, {}, (chunk) => { if (chunk.type === 'text-delta') busy(400) })
    expect(finish.failure).toBeUndefined()
    expect(blocks).toEqual([{ type: 'text', text: 'onetwothree' }])
  })
})

describe('wrong-shaped events', () => {
  it.each(['null-choice', 'null-tool-call', 'number-content', 'string-delta', 'string-choices', 'number-tool-name', 'array-usage', 'string-tokens'] as const)(
    'fails %s with MALFORMED_RESPONSE, not a retried TRANSPORT',
    async (shape) => {
      const { root, server } = await boot([{ steps: [{ wrongShape: shape }] }, { steps: [{ text: 'never' }] }])
      const { finish } = await run(root)
      expect(finish.failure?.code).toBe('MALFORMED_RESPONSE')
      expect(finish.failure?.message).toMatch(/^OpenAI sent /)
      expect(server.requests).toHaveLength(1)
    },
  )
})
