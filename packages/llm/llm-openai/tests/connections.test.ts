// Connections over real HTTP: a stream that ended hands its connection to the next request; one the
// server keeps open past `[DONE]` is cut off, and the next request gets a new connection.
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { agentFor } from '../src/transport.ts'
import { boot, bootAt, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
let plain: Server | undefined
afterEach(async () => {
  await closeServers()
  plain?.closeAllConnections()
  await new Promise((resolve) => plain ? plain.close(resolve) : resolve(undefined))
  plain = undefined
  delete process.env.REIN_TEST_OPENAI_KEY
})

/** Resolves once the adapter's agent holds an idle connection to `url`'s origin: the last response has ended and handed it back. */
async function idleConnectionTo(url: string) {
  const agent = await agentFor(new URL(url))
  const { host } = new URL(url)
  await expect.poll(() => Object.entries(agent.freeSockets).filter(([name]) => name.startsWith(`${host}:`)).flatMap(([, sockets]) => sockets ?? []).length).toBeGreaterThan(0)
}

const TEXT = 'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n'
const FINISH = 'data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'

describe('connections', () => {
  it('sends a run of requests over one kept-alive connection when each stream ends with [DONE]', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'one' }] }, { steps: [{ text: 'two' }] }, { steps: [{ text: 'three' }] }])
    for (const text of ['one', 'two', 'three']) {
      expect((await run(root)).blocks).toEqual([{ type: 'text', text }])
      await idleConnectionTo(server.url)
    }
    expect(server.requests.map((request) => request.connection)).toEqual([1, 1, 1])
  })

  it('ends the answer at [DONE] though the server keeps the body open, and sends the next request on a new connection', async () => {
    const lingering = { steps: [{ text: 'kept' }, { raw: FINISH }, { raw: 'data: [DONE]\n\n' }, { stall: true } as const], finishReason: null, usage: null, done: false }
    const { root, server } = await boot([lingering, { steps: [{ text: 'next' }] }], { streamIdleTimeoutMs: 600_000 })
    let bodyEnded = false
    const first = await run(root)
    void server.requests[0]!.reply.settled.then(() => { bodyEnded = true })
    await new Promise((resolve) => setImmediate(resolve))
    expect(bodyEnded).toBe(false)
    expect(first.blocks).toEqual([{ type: 'text', text: 'kept' }])
    expect(first.finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect((await run(root)).blocks).toEqual([{ type: 'text', text: 'next' }])
    expect(server.requests.map((request) => request.connection)).toEqual([1, 2])
  })

  it('fails as TRANSPORT, which the runtime retries on a new connection, when the server closed the kept-alive one the request went out on', async () => {
    // The server closes a connection when a second request arrives on it, as a server whose
    // keep-alive timeout ran out just as the request was sent.
    const served = new WeakMap<Socket, number>()
    let requests = 0
    plain = createServer((request, response) => {
      requests++
      const count = (served.get(request.socket) ?? 0) + 1
      served.set(request.socket, count)
      if (count === 2) {
        request.socket.destroy()
        return
      }
      request.resume()
      request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${TEXT}${FINISH}data: [DONE]\n\n`))
    })
    await new Promise<void>((resolve) => plain!.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/v1`
    const root = await bootAt(url, {}, 1)
    expect((await run(root)).finish.failure).toBeUndefined()
    await idleConnectionTo(url)
    const second = await run(root)
    expect(second.finish.failure).toBeUndefined()
    expect(second.events.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && event.failure.code)).toEqual(['TRANSPORT'])
    expect(requests).toBe(3)
  })
})
