/**
 * `startMockOpenAiServer`: a real `node:http` server on 127.0.0.1 that speaks the OpenAI /
 * DeepSeek chat-completions SSE wire, plays a script, and records every request and how its reply
 * went (bytes written, whether the client hung up first).
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import type { JsonValue } from '@rein/base'
import type {
  MockBodyFaults, MockContextOverflowReply, MockErrorReply, MockModelNotFoundReply, MockReply, MockReplyRecord, MockScript,
  MockServerKind, MockStreamReply, MockUsage, MockWrongShape, RecordedRequest,
} from './mock-script.ts'

export interface MockServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43121/v1`. */
  readonly url: string
  /** Every request received since the start or the last `reset`, in order. */
  readonly requests: readonly RecordedRequest[]
  /**
   * Forgets the recorded requests and restarts the script's count, playing `script` from now on
   * when given. One server can then serve many tests in a row from one address, so the client's
   * per-origin connection pool is reused instead of growing by one pool per server.
   */
  reset(script?: MockScript): void
  /** Destroys open connections (a stalled stream included) and stops listening. */
  close(): Promise<void>
}

const DEFAULT_USAGE: MockUsage = {
  prompt_tokens: 12, completion_tokens: 4, total_tokens: 16,
  prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 },
}

/** Padding for `bodyBytes`: one buffer written again and again, so a huge body is never in memory. */
const PADDING = Buffer.alloc(64 * 1024, ' ')
/** A `filler` step's comment line, 64 KiB with its newline: `:` and spaces. */
const COMMENT_LINE = Buffer.concat([Buffer.from(':'), PADDING.subarray(0, PADDING.length - 2), Buffer.from('\n')])

/**
 * Starts a server on a free port of 127.0.0.1; close it when the test ends. Every response carries
 * `x-request-id: mock-req-<n>`, `n` being the 1-based request number.
 */
export async function startMockOpenAiServer(initialScript: MockScript): Promise<MockServer> {
  let script = initialScript
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  const connectionOf = new WeakMap<Socket, number>()
  let connections = 0
  let chatRequests = 0
  let closing = false
  const server = createServer((incoming, response) => {
    const exchange = track(response, () => closing)
    handle(incoming, exchange).catch((error: unknown) => {
      const message = `the mock server failed: ${String(error)}`
      if (!response.headersSent) void sendError(exchange, { kind: 'error', status: 500, message, type: 'server_error' })
      else response.end(`data: ${JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } })}\n\n`)
    })
  })
  server.on('connection', (socket) => {
    connectionOf.set(socket, ++connections)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function handle(incoming: IncomingMessage, exchange: Exchange) {
    const raw = await readBody(incoming)
    const request: RecordedRequest = {
      method: incoming.method ?? 'GET',
      path: incoming.url ?? '/',
      headers: Object.fromEntries(Object.entries(incoming.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value ?? ''])),
      body: parseJson(raw),
      raw,
      connection: connectionOf.get(incoming.socket) ?? 0,
      reply: exchange.record,
    }
    requests.push(request)
    exchange.response.setHeader('x-request-id', `mock-req-${requests.length}`)
    if (request.method !== 'POST' || !/\/chat\/completions\/?$/.test(request.path.split('?')[0]!)) {
      await sendError(exchange, { kind: 'error', status: 404, message: `no route for ${request.method} ${request.path}`, type: 'invalid_request_error' })
      return
    }
    const index = chatRequests++
    let reply: MockReply | undefined
    try {
      reply = typeof script === 'function' ? script(request, index) : script[index]
    } catch (error) {
      await sendError(exchange, { kind: 'error', status: 500, message: `the mock script failed on request #${index + 1}: ${String(error)}`, type: 'server_error' })
      return
    }
    if (!reply) {
      await sendError(exchange, { kind: 'error', status: 500, message: `the mock script has no reply for request #${index + 1}`, type: 'server_error' })
      return
    }
    const model = (request.body as { model?: unknown } | undefined)?.model
    const resolved = resolveReply(reply, typeof model === 'string' ? model : 'mock-model')
    if (resolved.kind === 'error') await sendError(exchange, resolved)
    else if (resolved.kind === 'http') {
      await sendBody(exchange, resolved.status ?? 200, { 'content-type': resolved.contentType ?? 'text/html; charset=utf-8', ...resolved.headers }, resolved.body ?? HTML_PAGE, resolved)
    } else await sendStream(exchange, resolved, request)
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    reset(next) {
      requests.length = 0
      chatRequests = 0
      if (next !== undefined) script = next
    },
    close: () => new Promise<void>((resolve) => {
      closing = true
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

const HTML_PAGE = '<!doctype html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>\n'

/** One response being written, with the record of how it went. */
interface Exchange {
  response: ServerResponse
  record: MockReplyRecord
  /** Writes bytes; false once the connection is gone. Counts what the socket accepted. */
  write(bytes: Buffer | string): Promise<boolean>
  /** The server drops the connection itself (a `disconnect` step): not the client's doing. */
  cut(): void
}

function track(response: ServerResponse, closing: () => boolean): Exchange {
  let serverCut = false
  let settle!: () => void
  const record: MockReplyRecord = { bytesWritten: 0, clientClosedEarly: false, settled: new Promise<void>((resolve) => { settle = resolve }) }
  const closed = new Promise<false>((resolve) => {
    response.once('close', () => {
      if (!response.writableFinished && !serverCut && !closing()) record.clientClosedEarly = true
      settle()
      resolve(false)
    })
  })
  return {
    response,
    record,
    write(data) {
      if (response.destroyed || response.writableEnded) return Promise.resolve(false)
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
      const written = new Promise<boolean>((resolve) => {
        response.write(bytes, (error) => {
          if (!error) record.bytesWritten += bytes.length
          resolve(!error)
        })
      })
      return Promise.race([written, closed])
    },
    cut() {
      serverCut = true
      response.socket?.destroy()
    },
  }
}

/** A ready-made provider reply, as the error or stream reply it stands for. */
function resolveReply(reply: MockReply, model: string): MockErrorReply | Exclude<MockReply, MockContextOverflowReply | MockModelNotFoundReply> {
  if (reply.kind === 'context-overflow') return overflowReply(reply)
  if (reply.kind === 'model-not-found') return modelNotFoundReply(reply, model)
  return reply
}

/*
 * Context-overflow wordings, from each project's source:
 * - llama.cpp: tools/server/server-context.cpp (send_error "request (%d tokens) exceeds the available
 *   context size (%d tokens), try increasing it", ERROR_TYPE_EXCEED_CONTEXT_SIZE) and
 *   tools/server/server-common.cpp (format_error_response: type exceed_context_size_error, code 400;
 *   server-task.cpp adds n_prompt_tokens and n_ctx).
 * - vLLM: vllm/v1/engine/input_processor.py (_validate_prompt_len: "The decoder prompt (length N) is
 *   longer than the maximum model length of M. …"), sent as {"error": {message, type: "BadRequestError",
 *   param, code: 400}} by vllm/entrypoints/openai/engine/serving.py (create_error_response and
 *   create_streaming_error_response).
 * - Ollama: llm/llama_server.go ("the prompt is longer than the context length currently available to
 *   the model; …", HTTP 400), wrapped by openai/openai.go NewError (type invalid_request_error).
 * - OpenAI and DeepSeek: their API references (research/llm-wire-formats.md §3).
 */
function overflowError(server: MockServerKind, prompt: number, context: number): { message: string } & Record<string, JsonValue> {
  switch (server) {
    case 'openai':
      return {
        message: `This model's maximum context length is ${context} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
        type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded',
      }
    case 'deepseek':
      return {
        message: `This model's maximum context length is ${context} tokens. However, you requested ${prompt + 1000} tokens (${prompt} in the messages, 1000 in the completion). Please reduce the length of the messages or completion.`,
        type: 'invalid_request_error', param: null, code: 'invalid_request_error',
      }
    case 'llama.cpp':
      return {
        code: 400, message: `request (${prompt} tokens) exceeds the available context size (${context} tokens), try increasing it`,
        type: 'exceed_context_size_error', n_prompt_tokens: prompt, n_ctx: context,
      }
    case 'vllm':
      return {
        message: `The decoder prompt (length ${prompt}) is longer than the maximum model length of ${context}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`,
        type: 'BadRequestError', param: null, code: 400,
      }
    case 'ollama':
      return {
        message: 'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length',
        type: 'invalid_request_error', param: null, code: null,
      }
  }
}

function overflowReply(reply: MockContextOverflowReply): MockErrorReply | MockStreamReply {
  const error = overflowError(reply.server, reply.promptTokens ?? 9739, reply.contextTokens ?? 8192)
  if (!reply.inStream) return { kind: 'error', status: 400, body: { error } }
  return { steps: [...reply.steps ?? [], { error }] }
}

/*
 * Model-not-found wordings: OpenAI's API (404, code model_not_found); vLLM
 * vllm/entrypoints/openai/engine/serving.py _check_model (404 NotFoundError); Ollama server/routes.go
 * ("model '%s' not found", 404, wrapped as not_found_error by openai/openai.go); llama.cpp router
 * tools/server/server-models.cpp ("model not found", 400); DeepSeek: 400 "Model Not Exist".
 */
function modelNotFoundReply(reply: MockModelNotFoundReply, model: string): MockErrorReply {
  switch (reply.server) {
    case 'openai':
      return { kind: 'error', status: 404, body: { error: { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' } } }
    case 'deepseek':
      return { kind: 'error', status: 400, body: { error: { message: 'Model Not Exist', type: 'invalid_request_error', param: null, code: 'invalid_request_error' } } }
    case 'llama.cpp':
      return { kind: 'error', status: 400, body: { error: { code: 400, message: 'model not found', type: 'invalid_request_error' } } }
    case 'vllm':
      return { kind: 'error', status: 404, body: { error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 } } }
    case 'ollama':
      return { kind: 'error', status: 404, body: { error: { message: `model '${model}' not found`, type: 'not_found_error', param: null, code: null } } }
  }
}

async function sendError(exchange: Exchange, reply: MockErrorReply) {
  const body = reply.body ?? {
    error: { message: reply.message ?? `mock error ${reply.status}`, type: reply.type ?? 'server_error', param: null, code: reply.code ?? null },
  }
  const headers = { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...reply.headers }
  await sendBody(exchange, reply.status, headers, typeof body === 'string' ? body : JSON.stringify(body), reply)
}

/** Status, headers and a body, padded to `bodyBytes` as it goes out, cut short at `stallAfterBytes`. */
async function sendBody(exchange: Exchange, status: number, headers: Readonly<Record<string, string>>, text: string, faults: MockBodyFaults) {
  const { response } = exchange
  const body = Buffer.from(text, 'utf8')
  const total = Math.max(body.length, faults.bodyBytes ?? 0)
  const stalls = faults.stallAfterBytes !== undefined
  const limit = stalls ? Math.min(total, Math.max(0, faults.stallAfterBytes!)) : total
  response.writeHead(status, { ...headers, 'content-length': String(total) })
  if (limit === 0) {
    response.flushHeaders()
    if (!stalls) response.end()
    return
  }
  if (!await exchange.write(body.subarray(0, Math.min(body.length, limit)))) return
  for (let sent = Math.min(body.length, limit); sent < limit;) {
    const size = Math.min(PADDING.length, limit - sent)
    if (!await exchange.write(size === PADDING.length ? PADDING : PADDING.subarray(0, size))) return
    sent += size
  }
  // A stalled body stays open until the client gives up or the server closes.
  if (!stalls) response.end()
}

/** The chunks `MockWrongShape` names, in an otherwise normal envelope. */
function wrongShape(shape: MockWrongShape, base: Record<string, JsonValue>): Record<string, JsonValue> {
  const choice = (delta: JsonValue) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })
  switch (shape) {
    case 'null-choice': return { ...base, choices: [null] }
    case 'null-tool-call': return choice({ tool_calls: [null] })
    case 'number-content': return choice({ content: 42 })
    case 'string-delta': return choice('x')
    case 'string-choices': return { ...base, choices: 'x' }
    case 'number-tool-name': return choice({ tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 7, arguments: '' } }] })
    case 'array-usage': return { ...base, choices: [], usage: [1, 2] }
    case 'string-tokens': return { ...base, choices: [], usage: { prompt_tokens: '12 tokens', completion_tokens: 4 } }
  }
}

async function sendStream(exchange: Exchange, reply: MockStreamReply, request: RecordedRequest) {
  const { response } = exchange
  const body = (request.body ?? {}) as { model?: string; stream_options?: { include_usage?: boolean } }
  const model = reply.model ?? body.model ?? 'mock-model'
  const base = { id: reply.id ?? 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_mock' }
  const deepseek = reply.dialect === 'deepseek'
  const wantsUsage = body.stream_options?.include_usage === true
  const usageIn = reply.usageIn ?? (deepseek ? 'finish-chunk' : 'separate-chunk')
  const usage = reply.usage === null ? undefined : reply.usage ?? DEFAULT_USAGE
  const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`
  const chunk = (delta: object, finishReason: string | null = null, extra: object = {}) =>
    event({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(wantsUsage ? { usage: null } : {}), ...extra })

  // Headers leave with the first write, so a leading stall keeps the client waiting for them.
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...reply.headers })
  const write = createWriter(exchange, reply.chunkBytes)
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
      const key = call.id ?? `call_${toolIndexes.size}`
      const index = call.index ?? toolIndexes.get(key) ?? toolIndexes.size
      toolIndexes.set(key, index)
      await data(chunk({ tool_calls: [{ index, ...(call.id === null ? {} : { id: key }), type: 'function', function: { name: call.name, arguments: '' } }] }))
      for (const fragment of fragments(call.arguments)) await data(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }))
    } else if ('toolArguments' in step) {
      const index = toolIndexes.get(step.toolArguments.id)
      if (index === undefined) throw new Error(`toolArguments for "${step.toolArguments.id}", which no earlier toolCall step sent`)
      for (const fragment of fragments(step.toolArguments.arguments)) await data(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }))
    } else if ('keepAlive' in step) await write(': keep-alive\n\n')
    else if ('filler' in step) {
      if (!await writeFiller(exchange, step.filler.bytes, step.filler.as ?? 'comment')) return
    }
    else if ('raw' in step) await write(step.raw)
    else if ('event' in step) await write(event(step.event))
    else if ('wrongShape' in step) await write(event(wrongShape(step.wrongShape, base)))
    else if ('error' in step) {
      await write(event({ error: { type: 'server_error', code: null, param: null, ...step.error } }))
      response.end()
      return
    } else if ('delayMs' in step) await delay(step.delayMs)
    else if ('waitFor' in step) await step.waitFor.catch(() => undefined)
    else if ('stall' in step) {
      // Headers that are not out yet stay unsent; the client waits until it gives up or close() runs.
      return
    } else {
      exchange.cut()
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
function createWriter(exchange: Exchange, chunkBytes: number | undefined) {
  return async (text: string) => {
    const bytes = Buffer.from(text, 'utf8')
    const size = chunkBytes && chunkBytes > 0 ? chunkBytes : bytes.length
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (!await exchange.write(bytes.subarray(offset, offset + size))) return
      // Let each piece leave as its own TCP write, so the client really sees it split.
      if (size < bytes.length) await delay(1)
    }
  }
}

/**
 * A `filler` step: `bytes` of comment lines, or one `data:` line of spaces, in 64 KiB pieces that
 * reuse one buffer. False once the client is gone (the rest is not written).
 */
async function writeFiller(exchange: Exchange, bytes: number, as: 'comment' | 'event'): Promise<boolean> {
  let left = Math.max(0, Math.floor(bytes))
  if (as === 'event') {
    if (!await exchange.write('data: ')) return false
    for (; left > 0; left -= PADDING.length) {
      if (!await exchange.write(left >= PADDING.length ? PADDING : PADDING.subarray(0, left))) return false
    }
    return exchange.write('\n\n')
  }
  for (; left >= COMMENT_LINE.length; left -= COMMENT_LINE.length) {
    if (!await exchange.write(COMMENT_LINE)) return false
  }
  // The last line is shorter: `:`, spaces and its newline, or a lone newline for one byte.
  if (left >= 2) return exchange.write(Buffer.concat([COMMENT_LINE.subarray(0, left - 1), Buffer.from('\n')]))
  return left === 1 ? exchange.write('\n') : true
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
