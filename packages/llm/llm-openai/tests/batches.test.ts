// streamBatches over HTTP: what one write of the server reaches the runtime as.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { userMessage, type StreamChunk } from '@rein/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { OpenAiCompatibleAdapter } from '../src/index.ts'
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
async function serveWhole(body: string, contentType = 'text/event-stream') {
  const served = { requests: 0 }
  server = createServer((request, response) => {
    served.requests++
    request.resume()
    request.on('end', () => response.writeHead(200, { 'content-type': contentType }).end(body))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, served }
}

/** A server answering with `body` in one write and leaving the response open; `closed` settles when the client drops it. */
async function serveOpen(body: string) {
  let dropped!: () => void
  const closed = new Promise<void>((resolve) => { dropped = resolve })
  server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      response.on('close', dropped)
      response.writeHead(200, { 'content-type': 'text/event-stream' }).write(body)
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, closed }
}

const types = (batches: (readonly StreamChunk[])[]) => batches.map((batch) => batch.map((chunk) => chunk.type))

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
      ['block-start', 'text-delta', 'text-delta', 'usage', 'block-end'],
      ['finish'],
    ])
  })

  it('reads an event stream whose content type is written in capitals (media types ignore case)', async () => {
    const { url } = await serveWhole(`${delta('Hello')}${stop}data: [DONE]\n\n`, 'Text/Event-Stream; charset=UTF-8')
    expect((await batchesOf(url)).at(-1)).toEqual([{ type: 'finish', reason: 'stop', responseId: 'r1', responseModel: 'm' }])
  })

  it('shows the text before an in-stream error of the same write, then ends with the error without a retry', async () => {
    const { url, served } = await serveWhole(`${delta('partial')}${event({ error: { message: 'the upstream broke', type: 'server_error' } })}`)
    const batches = await batchesOf(url)
    expect(batches.map((batch) => batch.map((chunk) => chunk.type))).toEqual([['block-start', 'text-delta'], ['finish']])
    expect(batches[1]![0]).toMatchObject({ reason: 'error', failure: { code: 'SERVER' } })
    expect(served.requests).toBe(1)
  })

  it('shows the whole events before a torn last one, then ends with STREAM_CLOSED', async () => {
    const { url, served } = await serveWhole(`${delta('half')}data: {"choi`)
    const batches = await batchesOf(url)
    expect(types(batches)).toEqual([['block-start', 'text-delta'], ['finish']])
    expect(batches[1]![0]).toMatchObject({ reason: 'error', failure: { code: 'STREAM_CLOSED', message: expect.stringContaining('in the middle of an event') } })
    expect(served.requests).toBe(1)
  })

  it('ends at [DONE] whatever torn bytes follow it in the same write', async () => {
    const { url } = await serveWhole(`${delta('a')}${stop}data: [DONE]\n\ndata: {"cho`)
    const batches = await batchesOf(url)
    expect(types(batches)).toEqual([['block-start', 'text-delta', 'usage', 'block-end'], ['finish']])
    expect(batches[1]![0]).toMatchObject({ reason: 'stop' })
  })

  it('reads a [DONE] the body ends on without its closing blank line', async () => {
    const { url } = await serveWhole(`${delta('a')}${stop}data: [DONE]`)
    const batches = await batchesOf(url)
    // The [DONE] is known only when the body ends, a read after the one that brought the answer.
    expect(types(batches)).toEqual([['block-start', 'text-delta', 'usage'], ['block-end'], ['finish']])
    expect(batches[2]?.[0]).toMatchObject({ reason: 'stop' })
  })

  it('drops the connection of a failed stream before handing over what it salvaged', async () => {
    const { url, closed } = await serveOpen(`${delta('partial')}data: not json\n\n`)
    const root = await bootAt(url, {}, 0)
    const reading = root.llm.streamBatches({ provider: 'openai', model: 'm', messages: [userMessage('hi', 'u1')] })[Symbol.asyncIterator]()
    const first = await reading.next()
    expect(first.done ? [] : first.value.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta'])
    // Still holding the salvaged batch, not asking for more: the server must already see the close.
    await closed
    const rest: StreamChunk[] = []
    for (let next = await reading.next(); !next.done; next = await reading.next()) rest.push(...next.value)
    expect(rest).toEqual([expect.objectContaining({ type: 'finish', reason: 'error', failure: expect.objectContaining({ code: 'MALFORMED_RESPONSE' }) })])
  })

  it('drops the connection when its consumer stops reading, told by the adapter itself', async () => {
    const { url, closed } = await serveOpen(delta('first'))
    // The adapter alone, without the runtime: its abort on a stopped attempt would hide a leak here.
    const adapter = new OpenAiCompatibleAdapter({ label: 'gw', baseURL: url, apiKeyEnv: false, headers: {}, models: [], streamIdleTimeoutMs: 60_000, maxTokensField: 'max_tokens' })
    for await (const batch of adapter.streamBatches({ provider: 'gw', model: 'm', messages: [userMessage('hi', 'u1')], signal: new AbortController().signal })) {
      expect(batch.map((chunk) => chunk.type)).toContain('text-delta')
      break
    }
    await closed
  })
})
