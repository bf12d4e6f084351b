/**
 * `startMockOpenAiServer`: a real `node:http` server on 127.0.0.1 that speaks the OpenAI /
 * DeepSeek chat-completions SSE wire, plays a script, and records every request.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import type { MockErrorReply, MockReply, MockScript, MockStreamReply, MockUsage, RecordedRequest } from './mock-script.ts'

export interface MockServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43121/v1`. */
  readonly url: string
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[]
  /** Destroys open connections (a stalled stream included) and stops listening. */
  close(): Promise<void>
}

const DEFAULT_USAGE: MockUsage = {
  prompt_tokens: 12, completion_tokens: 4, total_tokens: 16,
  prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 },
}

/**
 * Starts a server on a free port of 127.0.0.1; close it when the test ends. Every response carries
 * `x-request-id: mock-req-<n>`, `n` being the 1-based request number.
 */
export async function startMockOpenAiServer(script: MockScript): Promise<MockServer> {
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  let chatRequests = 0
  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      const message = `the mock server failed: ${String(error)}`
      if (!response.headersSent) sendError(response, { kind: 'error', status: 500, message, type: 'server_error' })
      else response.end(`data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function handle(incoming: IncomingMessage, response: ServerResponse) {
    const raw = await readBody(incoming)
    const request: RecordedRequest = {
      method: incoming.method ?? 'GET',
      path: incoming.url ?? '/',
      headers: Object.fromEntries(Object.entries(incoming.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value ?? ''])),
      body: parseJson(raw),
      raw,
    }
    requests.push(request)
    response.setHeader('x-request-id', `mock-req-${requests.length}`)
    if (request.method !== 'POST' || !/\/chat\/completions\/?$/.test(request.path.split('?')[0]!)) {
      sendError(response, { kind: 'error', status: 404, message: `no route for ${request.method} ${request.path}`, type: 'invalid_request_error' })
      return
    }
    const index = chatRequests++
    let reply: MockReply | undefined
    try {
      reply = typeof script === 'function' ? script(request, index) : script[index]
    } catch (error) {
      sendError(response, { kind: 'error', status: 500, message: `the mock script failed on request #${index + 1}: ${String(error)}`, type: 'server_error' })
      return
    }
    if (!reply) {
      sendError(response, { kind: 'error', status: 500, message: `the mock script has no reply for request #${index + 1}`, type: 'server_error' })
      return
    }
    if (reply.kind === 'error') sendError(response, reply)
    else await sendStream(response, reply, request)
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

function sendError(response: ServerResponse, reply: MockErrorReply) {
  const body = reply.body ?? {
    error: { message: reply.message ?? `mock error ${reply.status}`, type: reply.type ?? 'server_error', param: null, code: reply.code ?? null },
  }
  response.writeHead(reply.status, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...reply.headers })
  response.end(typeof body === 'string' ? body : JSON.stringify(body))
}

async function sendStream(response: ServerResponse, reply: MockStreamReply, request: RecordedRequest) {
  const body = (request.body ?? {}) as { model?: string; stream_options?: { include_usage?: boolean } }
  const model = body.model ?? 'mock-model'
  const base = { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_mock' }
  const deepseek = reply.dialect === 'deepseek'
  const wantsUsage = body.stream_options?.include_usage === true
  const usageIn = reply.usageIn ?? (deepseek ? 'finish-chunk' : 'separate-chunk')
  const usage = reply.usage === null ? undefined : reply.usage ?? DEFAULT_USAGE
  const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`
  const chunk = (delta: object, finishReason: string | null = null, extra: object = {}) =>
    event({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(wantsUsage ? { usage: null } : {}), ...extra })

  // Headers leave with the first write, so a leading stall keeps the client waiting for them.
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...reply.headers })
  const write = createWriter(response, reply.chunkBytes)
  let roleSent = false
  const data = async (text: string) => {
    if (!roleSent) {
      roleSent = true
      await write(chunk(deepseek ? { role: 'assistant', content: null, reasoning_content: '' } : { role: 'assistant', content: '', refusal: null }))
    }
    await write(text)
  }
  const toolIndexes = new Map<string, number>()
  const fragments = (value: string | readonly string[]) => typeof value === 'string' ? [value] : value
  for (const step of reply.steps) {
    if ('text' in step) await data(chunk(deepseek ? { content: step.text, reasoning_content: null } : { content: step.text }))
    else if ('reasoning' in step) await data(chunk({ content: null, reasoning_content: step.reasoning }))
    else if ('toolCall' in step) {
      const call = step.toolCall
      const id = call.id ?? `call_${toolIndexes.size}`
      const index = call.index ?? toolIndexes.get(id) ?? toolIndexes.size
      toolIndexes.set(id, index)
      await data(chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }))
      for (const fragment of fragments(call.arguments)) await data(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }))
    } else if ('toolArguments' in step) {
      const index = toolIndexes.get(step.toolArguments.id)
      if (index === undefined) throw new Error(`toolArguments for "${step.toolArguments.id}", which no earlier toolCall step sent`)
      for (const fragment of fragments(step.toolArguments.arguments)) await data(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }))
    } else if ('keepAlive' in step) await write(': keep-alive\n\n')
    else if ('raw' in step) await write(step.raw)
    else if ('error' in step) {
      await write(event({ error: { type: 'server_error', code: null, param: null, ...step.error } }))
      response.end()
      return
    } else if ('delayMs' in step) await delay(step.delayMs)
    else if ('stall' in step) {
      // Headers that are not out yet stay unsent; the client waits until it gives up or close() runs.
      return
    } else {
      response.socket?.destroy()
      return
    }
  }
  const finishReason = reply.finishReason === undefined ? (toolIndexes.size > 0 ? 'tool_calls' : 'stop') : reply.finishReason
  if (finishReason !== null) {
    await data(chunk({}, finishReason, usage && usageIn === 'finish-chunk' ? { usage } : {}))
  }
  if (usage && usageIn === 'separate-chunk' && wantsUsage) await write(event({ ...base, choices: [], usage }))
  if (reply.done !== false) await write('data: [DONE]\n\n')
  response.end()
}

/**
 * Writes events whole, or re-cut into fixed-size byte pieces to split lines and UTF-8 sequences.
 * Each write resolves once it has reached the socket, so a later `disconnect` cannot discard it.
 */
function createWriter(response: ServerResponse, chunkBytes: number | undefined) {
  return async (text: string) => {
    const bytes = Buffer.from(text, 'utf8')
    const size = chunkBytes && chunkBytes > 0 ? chunkBytes : bytes.length
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (response.destroyed) return
      await new Promise<void>((resolve) => response.write(bytes.subarray(offset, offset + size), () => resolve()))
      // Let each piece leave as its own TCP write, so the client really sees it split.
      if (size < bytes.length) await delay(1)
    }
  }
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    incoming.on('data', (part: Buffer) => parts.push(part))
    incoming.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    incoming.on('error', reject)
  })
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}
