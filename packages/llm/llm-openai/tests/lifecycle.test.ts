// Disposing plugins while a request is in flight on a stalled server: the HTTP request must stop.
import { userMessage, type StreamChunk } from '@rein/llm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

async function next(iterator: AsyncIterator<StreamChunk>, type: StreamChunk['type']) {
  for (let item = await iterator.next(); !item.done; item = await iterator.next()) if (item.value.type === type) return item.value
  throw new Error(`the stream ended before a ${type} chunk`)
}

async function drain(iterator: AsyncIterator<StreamChunk>) {
  const out: StreamChunk[] = []
  for (let item = await iterator.next(); !item.done; item = await iterator.next()) out.push(item.value)
  return out
}

describe('disposing while a stream is stalled', () => {
  it('ends the stream and hangs up when the provider plugin is disposed after a delta', async () => {
    const { root, server, provider } = await boot([{ steps: [{ text: 'Hal' }, { stall: true }] }], { streamIdleTimeoutMs: 600_000 })
    const iterator = root.llm.stream({ provider: 'openai', model: 'm', messages: [userMessage('hi')] })[Symbol.asyncIterator]()
    await next(iterator, 'text-delta')
    const ended = drain(iterator)
    await provider.dispose()
    expect((await ended).at(-1)).toEqual({ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: 'the provider serving route "openai" was unloaded mid-request' } })
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
  })

  it('ends with NO_ADAPTER when the provider is disposed while waiting for headers and nothing replaces it', async () => {
    const { root, server, provider } = await boot([{ steps: [{ stall: true }] }], { streamIdleTimeoutMs: 600_000 })
    const iterator = root.llm.stream({ provider: 'openai', model: 'm', messages: [userMessage('hi')] })[Symbol.asyncIterator]()
    const ended = drain(iterator)
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 2))
    await provider.dispose()
    expect(await ended).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'NO_ADAPTER', message: 'no adapter serves provider "openai"; registered: none' } }])
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
  })

  it('ends aborted and hangs up when the llm service is disposed', async () => {
    const { root, server, llm } = await boot([{ steps: [{ text: 'Hal' }, { stall: true }] }], { streamIdleTimeoutMs: 600_000 })
    const iterator = root.llm.stream({ provider: 'openai', model: 'm', messages: [userMessage('hi')] })[Symbol.asyncIterator]()
    await next(iterator, 'text-delta')
    const ended = drain(iterator)
    await llm.dispose()
    expect((await ended).at(-1)).toEqual({ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the llm service was stopped' } })
    await server.requests[0]!.reply.settled
    expect(server.requests[0]!.reply.clientClosedEarly).toBe(true)
  })
})
