/**
 * Every fault the testkit's mock server can inject, each with the outcome the docs promise for it:
 * the failure code (`@rein/llm-openai` README §Errors) and whether a delta reached the caller first.
 * Whether it is retried and whether it falls back follow from the code (`@rein/llm` README
 * §Fallback); `oracle.ts` applies those rules. Nothing here is read from the code under test.
 */

import type { LlmFailureCode } from '@rein/llm'
import type { MockReply, MockServerKind, MockStep, MockWrongShape } from '@rein/testkit'

/** The chunk shapes of the adapter the reply goes to. */
export type Dialect = 'openai' | 'deepseek'

/** What the docs say one reply does to one attempt. */
export type Effect =
  /** A healthy answer: `text` ends the turn, `tool` asks for the `note` tool (another step), `length` ends it `max-tokens`. */
  | { answer: 'text' | 'tool' | 'length' }
  /**
   * A failed attempt. `shown`: a delta reached the caller first (no retry, no fallback, the turn
   * keeps it as an interrupted answer), unless `takenBack`: only reasoning was shown, which a retry
   * discards, so it is retried as if nothing was. `retryAfterMs`: what the provider asked to wait.
   */
  | { code: LlmFailureCode; shown: boolean; takenBack?: true; retryAfterMs?: number; modelNotFound?: true }

export interface Fault {
  /** Stable name, shown in failures and figures. */
  readonly name: string
  /** The reply, built when the request comes (an HTTP date is relative to then) for the case's idle limit. */
  reply(dialect: Dialect, idleMs: number): MockReply
  readonly effect: Effect
  /** The test's listener blocks the event loop on each text delta (a slow consumer). */
  readonly slowConsumer?: true
  /**
   * A body the adapter must stop reading early: the connection is dropped with at most this many
   * bytes accepted (kernel buffers included), however big the body is.
   */
  readonly readAtMost?: number
  /** Too slow to draw at random: run in the matrix only. */
  readonly matrixOnly?: true
}

const MB = 1024 * 1024
/** What a dropped 200 MB body may have cost: the 64 KiB or 8 MiB the adapter reads, plus loopback socket buffers. */
const DROPPED = 32 * MB

/** Bytes of a body the adapter should never read whole (the error body is cut at 64 KiB, a 200 text/html is not read). */
const HUGE_BODY = 200 * 1024 * 1024

const html = '<!doctype html><html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n'
const servers: readonly MockServerKind[] = ['openai', 'deepseek', 'llama.cpp', 'vllm', 'ollama']
const shapes: readonly MockWrongShape[] = ['null-choice', 'null-tool-call', 'number-content', 'string-delta', 'string-choices', 'number-tool-name', 'array-usage', 'string-tokens']

/** A healthy reply of `kind` in `dialect`. */
export function healthy(kind: 'text' | 'tool' | 'length', dialect: Dialect): MockReply {
  const thinking: MockStep[] = dialect === 'deepseek' ? [{ reasoning: 'Thinking it over.' }] : []
  if (kind === 'tool') return { dialect, steps: [...thinking, { text: 'Noting it.' }, { toolCall: { name: 'note', arguments: ['{"text":', '"seen"}'] } }] }
  if (kind === 'length') return { dialect, steps: [...thinking, { text: 'This answer is cut' }], finishReason: 'length' }
  return { dialect, steps: [...thinking, { text: 'All done.' }] }
}

const fail = (code: LlmFailureCode, shown = false, retryAfterMs?: number): Effect => ({ code, shown, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) })
const stream = (steps: readonly MockStep[], extra: Partial<Extract<MockReply, { steps: readonly MockStep[] }>> = {}) =>
  (dialect: Dialect): MockReply => ({ dialect, steps, ...extra })
const constant = (reply: MockReply) => () => reply

/** The fixed matrix's faults; `fillerBytes` sizes the comment stream the adapter must read through. */
export function faultCatalog(options: { fillerBytes: number }): Fault[] {
  const list: Fault[] = [
    // 429 with each Retry-After form; the cap (retryAfterCapMs) applies in the oracle.
    { name: '429 retry-after seconds', reply: constant({ kind: 'error', status: 429, message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded', headers: { 'retry-after': '1' } }), effect: fail('RATE_LIMIT', false, 1000) },
    { name: '429 retry-after HTTP date', reply: () => ({ kind: 'error', status: 429, message: 'Rate limit reached', headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() } }), effect: fail('RATE_LIMIT', false, 3_600_000) },
    { name: '429 retry-after HTTP date in the past', reply: constant({ kind: 'error', status: 429, message: 'Rate limit reached', headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } }), effect: fail('RATE_LIMIT', false, 0) },
    { name: '429 retry-after-ms', reply: constant({ kind: 'error', status: 429, message: 'Rate limit reached', headers: { 'retry-after-ms': '7', 'retry-after': '1' } }), effect: fail('RATE_LIMIT', false, 7) },
    { name: '429 without retry-after', reply: constant({ kind: 'error', status: 429, message: 'Rate limit reached' }), effect: fail('RATE_LIMIT') },
    { name: '429 insufficient_quota', reply: constant({ kind: 'error', status: 429, message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' }), effect: fail('QUOTA') },
    // Server errors and timeouts.
    { name: '500', reply: constant({ kind: 'error', status: 500, message: 'The server had an error' }), effect: fail('SERVER') },
    { name: '502', reply: constant({ kind: 'error', status: 502, message: 'Bad gateway' }), effect: fail('SERVER') },
    { name: '503', reply: constant({ kind: 'error', status: 503, message: 'Service unavailable' }), effect: fail('SERVER') },
    { name: '529', reply: constant({ kind: 'error', status: 529, message: 'Overloaded', type: 'overloaded_error' }), effect: fail('OVERLOADED') },
    { name: '408', reply: constant({ kind: 'error', status: 408, message: 'Request timeout' }), effect: fail('TIMEOUT') },
    { name: '502 HTML page from a proxy', reply: constant({ kind: 'http', status: 502, body: html }), effect: fail('SERVER') },
    { name: '503 plain-text body', reply: constant({ kind: 'error', status: 503, body: 'upstream connect error or disconnect/reset before headers' }), effect: fail('SERVER') },
    // Refusals.
    { name: '401', reply: constant({ kind: 'error', status: 401, message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' }), effect: fail('AUTH') },
    { name: '403', reply: constant({ kind: 'error', status: 403, message: 'Forbidden' }), effect: fail('AUTH') },
    { name: '402', reply: constant({ kind: 'error', status: 402, message: 'Insufficient Balance', type: 'unknown_error' }), effect: fail('QUOTA') },
    { name: '400 invalid request', reply: constant({ kind: 'error', status: 400, message: "Invalid value for 'temperature'", type: 'invalid_request_error' }), effect: fail('INVALID_REQUEST') },
    ...servers.map((server): Fault => ({ name: `404 model (${server})`, reply: constant({ kind: 'model-not-found', server }), effect: { ...fail('INVALID_REQUEST'), modelNotFound: true } })),
    ...servers.map((server): Fault => ({ name: `context overflow as status (${server})`, reply: constant({ kind: 'context-overflow', server }), effect: fail('CONTEXT_WINDOW_EXCEEDED') })),
    ...servers.map((server): Fault => ({ name: `context overflow in stream (${server})`, reply: constant({ kind: 'context-overflow', server, inStream: true }), effect: fail('CONTEXT_WINDOW_EXCEEDED') })),
    { name: 'context overflow in stream after text', reply: constant({ kind: 'context-overflow', server: 'vllm', inStream: true, steps: [{ text: 'Let me' }] }), effect: fail('CONTEXT_WINDOW_EXCEEDED', true) },
    // Bodies that are not an event stream.
    { name: '200 HTML page', reply: constant({ kind: 'http' }), effect: fail('MALFORMED_RESPONSE') },
    { name: '200 JSON instead of a stream', reply: constant({ kind: 'http', contentType: 'application/json', body: '{"id":"chatcmpl-1","object":"chat.completion","choices":[]}' }), effect: fail('MALFORMED_RESPONSE') },
    { name: '200 MB error body (500)', reply: constant({ kind: 'error', status: 500, message: 'huge', bodyBytes: HUGE_BODY }), effect: fail('SERVER'), readAtMost: DROPPED },
    { name: '200 MB error body (429, retry-after-ms)', reply: constant({ kind: 'error', status: 429, message: 'huge', bodyBytes: HUGE_BODY, headers: { 'retry-after-ms': '3' } }), effect: fail('RATE_LIMIT', false, 3), readAtMost: DROPPED },
    { name: '200 MB HTML page', reply: constant({ kind: 'http', bodyBytes: HUGE_BODY }), effect: fail('MALFORMED_RESPONSE'), readAtMost: DROPPED },
    { name: '200 MB single event', reply: stream([{ filler: { bytes: HUGE_BODY, as: 'event' } }, { text: 'never' }]), effect: fail('MALFORMED_RESPONSE'), readAtMost: DROPPED },
    { name: 'huge stream of comments, then text', reply: stream([{ filler: { bytes: options.fillerBytes } }, { text: 'After the padding.' }]), effect: { answer: 'text' }, matrixOnly: true },
    // Stalls: each ends when the idle limit passes.
    { name: 'stall before headers', reply: stream([{ stall: true }]), effect: fail('TIMEOUT') },
    { name: 'stall after headers', reply: stream([{ keepAlive: true }, { stall: true }]), effect: fail('TIMEOUT') },
    { name: 'stall mid-stream', reply: stream([{ text: 'Half an ans' }, { stall: true }]), effect: fail('TIMEOUT', true) },
    { name: 'stall mid tool call', reply: stream([{ toolCall: { name: 'note', arguments: '{"te' } }, { stall: true }]), effect: fail('TIMEOUT', true) },
    { name: 'stall after headers of an error (503)', reply: constant({ kind: 'error', status: 503, message: 'busy', stallAfterBytes: 0 }), effect: fail('SERVER') },
    { name: 'stall inside an error body (500)', reply: constant({ kind: 'error', status: 500, message: 'upstream exploded', stallAfterBytes: 12 }), effect: fail('SERVER') },
    { name: 'stall inside an error body (429)', reply: constant({ kind: 'error', status: 429, message: 'slow down', stallAfterBytes: 12, headers: { 'retry-after-ms': '5' } }), effect: fail('RATE_LIMIT', false, 5) },
    { name: 'stall inside an error body (401)', reply: constant({ kind: 'error', status: 401, message: 'bad key', stallAfterBytes: 12 }), effect: fail('AUTH') },
    { name: 'stall inside a 200 HTML body', reply: constant({ kind: 'http', stallAfterBytes: 10 }), effect: fail('MALFORMED_RESPONSE') },
    { name: 'keep-alives for twice the idle limit, then text', reply: (dialect, idleMs) => ({ dialect, steps: [...Array.from({ length: 8 }, (): MockStep[] => [{ keepAlive: true }, { delayMs: Math.round(idleMs / 4) }]).flat(), { text: 'Worth the wait.' }] }), effect: { answer: 'text' } },
    // Disconnects.
    { name: 'disconnect before the response', reply: stream([{ disconnect: true }]), effect: fail('TRANSPORT') },
    { name: 'disconnect after headers', reply: stream([{ keepAlive: true }, { disconnect: true }]), effect: fail('STREAM_CLOSED') },
    { name: 'disconnect after the first delta', reply: stream([{ text: 'Hal' }, { disconnect: true }]), effect: fail('STREAM_CLOSED', true) },
    { name: 'disconnect after reasoning', reply: stream([{ reasoning: 'Let me think' }, { disconnect: true }]), effect: { ...fail('STREAM_CLOSED', true), takenBack: true } },
    { name: 'disconnect mid tool call', reply: stream([{ text: 'Calling.' }, { toolCall: { name: 'note', arguments: '{"text": "ha' } }, { disconnect: true }]), effect: fail('STREAM_CLOSED', true) },
    // Truncated streams: the body ends without a finish and without [DONE].
    { name: 'truncated before any delta', reply: stream([], { finishReason: null, done: false, usage: null }), effect: fail('STREAM_CLOSED') },
    { name: 'truncated after a delta', reply: stream([{ text: 'cut' }], { finishReason: null, done: false, usage: null }), effect: fail('STREAM_CLOSED', true) },
    { name: 'truncated mid-event before any delta', reply: stream([{ raw: 'data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","choi' }], { finishReason: null, done: false, usage: null }), effect: fail('STREAM_CLOSED') },
    { name: 'truncated mid-event after a delta', reply: stream([{ text: 'cut' }, { raw: 'data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","choi' }], { finishReason: null, done: false, usage: null }), effect: fail('STREAM_CLOSED', true) },
    { name: 'finish without [DONE]', reply: stream([{ text: 'Complete.' }], { done: false }), effect: { answer: 'text' } },
    { name: 'garbage bytes without framing', reply: stream([{ raw: '\u0000\u0001 binary \uFFFD garbage without any framing' }], { finishReason: null, done: false, usage: null }), effect: fail('STREAM_CLOSED') },
    // Malformed and wrong-shaped JSON.
    { name: 'malformed JSON before any delta', reply: stream([{ raw: 'data: {"choices": [oops\n\n' }]), effect: fail('MALFORMED_RESPONSE') },
    { name: 'malformed JSON after a delta', reply: stream([{ text: 'a' }, { raw: 'data: {"choices": [oops\n\n' }]), effect: fail('MALFORMED_RESPONSE', true) },
    ...shapes.map((shape): Fault => ({ name: `wrong shape ${shape}`, reply: stream([{ wrongShape: shape }]), effect: fail('MALFORMED_RESPONSE') })),
    { name: 'wrong shape after a delta', reply: stream([{ text: 'a' }, { wrongShape: 'number-content' }]), effect: fail('MALFORMED_RESPONSE', true) },
    { name: 'event that is a number', reply: stream([{ event: 42 }]), effect: fail('MALFORMED_RESPONSE') },
    { name: 'event that is an array', reply: stream([{ event: [1, 2] }]), effect: fail('MALFORMED_RESPONSE') },
    // In-stream errors, by their type or code.
    { name: 'in-stream server_error', reply: stream([{ error: { message: 'model crashed', type: 'server_error' } }]), effect: fail('SERVER') },
    { name: 'in-stream rate_limit', reply: stream([{ error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } }]), effect: fail('RATE_LIMIT') },
    { name: 'in-stream overloaded', reply: stream([{ error: { message: 'busy', type: 'overloaded_error' } }]), effect: fail('OVERLOADED') },
    { name: 'in-stream insufficient_quota', reply: stream([{ error: { message: 'no credit', type: 'insufficient_quota' } }]), effect: fail('QUOTA') },
    { name: 'in-stream invalid_request', reply: stream([{ error: { message: 'bad', type: 'invalid_request_error' } }]), effect: fail('INVALID_REQUEST') },
    { name: 'in-stream numeric code 401', reply: stream([{ error: { message: 'unauthorized', type: 'error', code: 401 } }]), effect: fail('AUTH') },
    { name: 'in-stream numeric code 503', reply: stream([{ error: { message: 'unavailable', type: 'error', code: 503 } }]), effect: fail('SERVER') },
    { name: 'in-stream error after a delta', reply: stream([{ text: 'Sta' }, { error: { message: 'model crashed', type: 'server_error' } }]), effect: fail('SERVER', true) },
    // Finishes that are not a plain stop.
    { name: 'empty answer', reply: stream([]), effect: fail('EMPTY_RESPONSE') },
    { name: 'finish content_filter', reply: stream([], { finishReason: 'content_filter' }), effect: fail('INVALID_REQUEST') },
    { name: 'finish insufficient_system_resource', reply: stream([], { finishReason: 'insufficient_system_resource' }), effect: fail('SERVER') },
    { name: 'finish length', reply: (dialect) => healthy('length', dialect), effect: { answer: 'length' } },
    // Slow producer and slow consumer: healthy, however slow.
    { name: 'reply cut into 5-byte writes', reply: (dialect) => ({ dialect, steps: [{ text: 'Ünïcödé 🎉 split across writes' }], chunkBytes: 5 }), effect: { answer: 'text' } },
    { name: 'slow consumer', reply: stream([{ text: 'one, ' }, { text: 'two.' }]), effect: { answer: 'text' }, slowConsumer: true, matrixOnly: true },
  ]
  return list
}
