// streamBatches over HTTP: what one write of the server reaches the runtime as.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { userMessage, type StreamChunk } from '@rein/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { bootAt } from './harness.ts'

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server ? server.close(resolve) : resolve(undefined))
  server = undefined
})

const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`
const delta = (content: string) => event({ id: 'r1', model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })
const stop = event({ id: 'r1', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2 } })

/** A server answering every request with `body`, written whole in one write; counts the requests. */
async function serveWhole(body: string) {
  const served = { requests: 0 }
  server = createServer((request, response) => {
    served.requests++
    request.resume()
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(body))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, served }
}

async function batchesOf(url: string) {
  const root = await bootAt(url, {}, 2)
  const out: (readonly StreamChunk[])[] = []
  for await (const batch of root.llm.streamBatches({ provider: 'openai', model: 'm', messages: [userMessage('hi', 'u1')] })) out.push(batch)
  return out
}

describe('streamBatches over HTTP', () => {
  it('gives a response written in one write as one batch, then its finish', async () => {
    const { url } = await serveWhole(`${delta('Hello')}${delta(' world')}${stop}data: [DONE]\n\n`)
    const batches = await batchesOf(url)
    expect(batches.map((batch) => batch.map((chunk) => chunk.type))).toEqual([
      ['block-start', 'text-delta', 'text-delta', 'block-end', 'usage'],
      ['finish'],
    ])
  })

  it('shows the text before an in-stream error of the same write, then ends with the error without a retry', async () => {
    const { url, served } = await serveWhole(`${delta('partial')}${event({ error: { message: 'the upstream broke', type: 'server_error' } })}`)
    const batches = await batchesOf(url)
    expect(batches.map((batch) => batch.map((chunk) => chunk.type))).toEqual([['block-start', 'text-delta'], ['finish']])
    expect(batches[1]![0]).toMatchObject({ reason: 'error', failure: { code: 'SERVER' } })
    expect(served.requests).toBe(1)
  })
})
