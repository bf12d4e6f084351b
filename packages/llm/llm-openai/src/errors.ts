/** HTTP statuses, error bodies and connection failures of OpenAI-compatible servers → `LlmFailure`. */

import { LlmError, type LlmFailure, type LlmFailureCode } from '@rein/llm'
import type { HeaderLookup } from './transport.ts'
import type { WireError } from './wire.ts'
import { connectionWords, cutHead, shorten } from '@rein/base'

/*
 * How servers say a request does not fit the context. Besides OpenAI's and DeepSeek's "maximum
 * context length": llama.cpp's "exceeds the available context size" / "larger than the max context
 * size" (tools/server/server-context.cpp), vLLM's "longer than the maximum model length"
 * (vllm/v1/engine/input_processor.py), Ollama's "longer than the context length" / "exceeds the
 * context length" (llm/llama_server.go, server/routes.go). tests/errors.test.ts cites each.
 */
const CONTEXT_OVERFLOW = /maximum context length|context length|context window|context size|maximum model length|too many tokens|prompt is too long|reduce the length/i
const CONTEXT_OVERFLOW_KIND = /context_length_exceeded|exceed_context_size/
/** "The model `x` does not exist", "model 'x' not found", "Model Not Exist", llama.cpp's "model not found". */
const MODEL_NOT_FOUND = /\bmodel\b.*\b(does not exist|not found|not exist)\b/i

/** `provider` names the server in messages (e.g. "OpenAI", "DeepSeek"); `model` is the model requested. */
export function failureFromResponse(provider: string, status: number, bodyText: string, headers: HeaderLookup, model?: string): LlmFailure {
  const error = parseError(bodyText)
  const detail = error?.message ?? (cutHead(bodyText.trim(), MAX_QUOTED) || 'no error body')
  const code = codeForStatus(status, error, detail)
  // Classified by all of it, shown by its head: an error body may be 64 KiB of one message.
  const shown = shorten(detail, MAX_QUOTED)
  const failure: LlmFailure = { code, message: `${provider} returned HTTP ${status}: ${shown}`, status }
  if (code === 'INVALID_REQUEST' && isModelNotFound(status, error, detail)) {
    failure.modelNotFound = true
    if (model !== undefined && !detail.includes(model)) failure.message = `${provider} does not serve model "${model}": HTTP ${status}: ${shown}`
  }
  const retryAfterMs = parseRetryAfter(headers)
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
  const requestId = headers.get('x-request-id') ?? headers.get('request-id')
  if (requestId) failure.requestId = requestId
  return failure
}

function codeForStatus(status: number, error: WireError | undefined, detail: string): LlmFailureCode {
  const kind = `${error?.code ?? ''} ${error?.type ?? ''}`
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 402 || /insufficient_quota|insufficient_balance/.test(kind)) return 'QUOTA'
  if (status === 429) return 'RATE_LIMIT'
  if (status === 408) return 'TIMEOUT'
  if (status === 529) return 'OVERLOADED'
  if (status >= 500) return 'SERVER'
  if (CONTEXT_OVERFLOW_KIND.test(kind) || CONTEXT_OVERFLOW.test(detail)) return 'CONTEXT_WINDOW_EXCEEDED'
  return 'INVALID_REQUEST'
}

function isModelNotFound(status: number, error: WireError | undefined, detail: string): boolean {
  if (error?.code === 'model_not_found') return true
  return (status === 404 || status === 400) && MODEL_NOT_FOUND.test(detail)
}

/**
 * An `{"error": …}` event inside a 200 stream. A numeric `code` in the HTTP range (vLLM and
 * llama.cpp send one) is read like the status it stands for.
 */
export function failureFromStreamError(provider: string, error: WireError | string): LlmFailure {
  const wire: WireError = typeof error === 'string' ? { message: error } : error
  const message = wire.message ?? 'unknown error'
  // An event may be megabytes of one message: classified by all of it, shown by its head.
  return { code: codeForStreamError(wire, message), message: `${provider} reported an error mid-stream: ${shorten(message, MAX_QUOTED)}` }
}

/**
 * An error object sent as a whole stream event, without the `error` envelope (vLLM's older
 * `{"object": "error", "message": …}`, a relay's `event: error` with `{"message": …, "code": 529}`),
 * or undefined when `event` has no `message` text. Read only from an event with neither choices nor
 * usage: it is what the server said instead of a chunk.
 */
export function topLevelError(event: Readonly<Record<string, unknown>>): WireError | undefined {
  return typeof event.message === 'string' ? pickError(event) : undefined
}

/** The most characters of a server's own words an error message quotes. */
const MAX_QUOTED = 300

/**
 * The code of an error a 200 answer carried, which has no error status to go by: its type and code
 * first, then its words. A balance error's words count: DeepSeek types one `unknown_error` and says
 * so only by its 402 status, which a relay that answers 200 drops.
 */
function codeForStreamError(wire: WireError, message: string): LlmFailureCode {
  const kind = `${wire.code ?? ''} ${wire.type ?? ''}`
  const numeric = statusOf(wire.code)
  if (/rate_limit/.test(kind)) return 'RATE_LIMIT'
  if (/insufficient_quota|insufficient_balance/.test(kind)) return 'QUOTA'
  if (/overloaded/.test(kind)) return 'OVERLOADED'
  if (CONTEXT_OVERFLOW_KIND.test(kind)) return 'CONTEXT_WINDOW_EXCEEDED'
  // A status says what kind of failure it is: the wording is read only as a 4xx's would be. A 429
  // "too many tokens per minute" is a rate limit, to retry, not a context to compact.
  if (numeric !== undefined) return codeForStatus(numeric, wire, message)
  if (INSUFFICIENT_FUNDS.test(message)) return 'QUOTA'
  if (CONTEXT_OVERFLOW.test(message)) return 'CONTEXT_WINDOW_EXCEEDED'
  if (/invalid_request/.test(kind)) return 'INVALID_REQUEST'
  return 'SERVER'
}

/** "Insufficient Balance" (DeepSeek), "Insufficient credits" (OpenRouter), "insufficient_quota". */
const INSUFFICIENT_FUNDS = /\binsufficient[ _](?:balance|quota|credits?|funds)\b/i

/** What a server that ignored `stream: true` is told it must do instead. */
const NOT_STREAMED = 'although rein asked for a stream (stream: true): rein needs a server that streams, or the setting on it that makes it stream'

/** A whole chat completion where a stream was asked for; `how` it came: "HTTP 200, application/json". */
export function notStreamedMessage(provider: string, how: string): string {
  return `${provider} answered with a whole chat completion (${how}), not streamed, ${NOT_STREAMED}`
}

/** Whether `text`, a body's start, is a chat completion: a `choices` array or `object: "chat.completion"`. */
export function isChatCompletion(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text)
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return false
    return ('choices' in body && Array.isArray(body.choices)) || ('object' in body && body.object === 'chat.completion')
  } catch {
    // A body cut at the read limit is no JSON: its start still shows what it is.
    return /^\s*\{/.test(text) && /"object"\s*:\s*"chat\.completion"|"choices"\s*:\s*\[/.test(text)
  }
}

/** Whether `text` is an error object as servers send them (`{"error": …}`, or vLLM's top-level one). */
export function isErrorBody(text: string): boolean {
  return parseError(text) !== undefined
}

/** A 200 event stream with no event, only `text` that is no SSE (secrets already cut out), as a failure. */
export function failureFromUnframedBody(provider: string, text: string): LlmFailure {
  // A relay's bare error object is read as HTTP error bodies are, and classified as one inside the
  // stream would be: a 200 has no error status to go by. Anything else is quoted, cut and escaped.
  const error = parseError(text)
  if (error) {
    const said = error.message ?? text.trim()
    return { code: codeForStreamError(error, said), message: `${provider} sent an error in place of an event stream: ${shorten(said, MAX_QUOTED)}` }
  }
  if (isChatCompletion(text)) return { code: 'MALFORMED_RESPONSE', message: notStreamedMessage(provider, 'as the body of an event stream, without data: lines') }
  // Retried, as a stream cut short is: a relay's one bad answer is not a reason to give up on it.
  return { code: 'STREAM_CLOSED', message: `${provider} sent no events in its event stream, only other text; it began ${JSON.stringify(shorten(text.trim(), 120))}` }
}

/** An in-stream error's `code` when it is an HTTP error status, a number or its digits ("429"). */
function statusOf(code: WireError['code']): number | undefined {
  const status = typeof code === 'number' ? code : typeof code === 'string' && /^[45]\d\d$/.test(code) ? Number(code) : undefined
  return status !== undefined && status >= 400 && status < 600 ? status : undefined
}

/** What to check, by the code: the words themselves are @rein/base's `connectionWords`, shared with the other packages. */
const CONNECTION_HINTS: Readonly<Record<string, string>> = {
  ECONNREFUSED: '; is the server running?',
  ENOTFOUND: '; check the host in baseURL',
  EAI_AGAIN: '; check the host in baseURL and the network',
  ERR_SSL_WRONG_VERSION_NUMBER: '; is it an http:// server?',
}

/** What a connection error may carry: Node puts the code on the error (an AggregateError also on each attempt), fetch on its cause. */
interface ConnectionError {
  code?: unknown
  message?: unknown
  errors?: readonly { code?: unknown }[]
  cause?: ConnectionError
}

/** The request failed before any response: `TRANSPORT`, in plain words naming the URL. */
export function failureFromTransportError(provider: string, url: string, error: unknown): LlmFailure {
  const failed = typeof error === 'object' && error !== null ? error as ConnectionError : {}
  const code = sslCode(connectionCode(failed), failed)
  if (code?.startsWith('HPE_')) return unreadableHttp(provider, url, code)
  const words = code === undefined ? undefined : connectionWords(code)
  if (code !== undefined && words !== undefined) {
    const failure: LlmFailure = { code: 'TRANSPORT', message: `could not reach ${provider}: ${words}${handshakeReason(code, failed)} at ${url} (${code})${CONNECTION_HINTS[code] ?? ''}` }
    // DNS answered that the name does not exist (EAI_AGAIN is the passing fault): a retry asks again, in vain.
    if (code === 'ENOTFOUND') failure.permanent = true
    return failure
  }
  const said = typeof failed.cause?.message === 'string' ? failed.cause.message : error instanceof Error ? error.message : String(error)
  return { code: 'TRANSPORT', message: `could not reach ${provider} at ${url}: ${code && !said.includes(code) ? `${said} (${code})` : said}` }
}

/**
 * An answer Node's HTTP parser could not read (`HPE_…`): the server was reached, so not "could not
 * reach". Bytes that are no HTTP at all (another protocol on the port) come back the same on every
 * try, so that one is permanent; other parse errors may be a proxy's passing fault.
 */
function unreadableHttp(provider: string, url: string, code: string): LlmFailure {
  if (code === 'HPE_INVALID_CONSTANT') return { code: 'TRANSPORT', permanent: true, message: `${provider} answered with something that is not HTTP at ${url} (${code}); is baseURL the API's address, with the right scheme?` }
  if (code === 'HPE_HEADER_OVERFLOW') return { code: 'TRANSPORT', message: `${provider} sent response headers larger than Node reads (16 KiB by default, --max-http-header-size) at ${url} (${code})` }
  return { code: 'TRANSPORT', message: `${provider} sent an HTTP answer that could not be read at ${url} (${code}); is baseURL the API's address, or a proxy in between at fault?` }
}

/**
 * The code of the error or its cause. Of several attempts (an AggregateError: each address of a
 * host), a refused one wins: a server that is down says more than an address family that is not
 * routed here (::1 first, then 127.0.0.1).
 */
function connectionCode(error: ConnectionError): string | undefined {
  const codes = [error, error.cause].flatMap((each) => [each?.code, ...(each?.errors ?? []).map((attempt) => attempt.code)])
    .filter((code): code is string => typeof code === 'string')
  return codes.includes('ECONNREFUSED') ? 'ECONNREFUSED' : codes[0]
}

/** OpenSSL's wrong-version error reaches Node as a bare EPROTO: named by its text. */
function sslCode(code: string | undefined, error: ConnectionError): string | undefined {
  if (code === 'EPROTO' && typeof error.message === 'string' && error.message.includes('wrong version number')) return 'ERR_SSL_WRONG_VERSION_NUMBER'
  return code
}

/**
 * What OpenSSL said of a handshake that failed otherwise (`EPROTO`: "unsupported protocol", "sslv3
 * alert handshake failure"), from Node's `…:SSL routines:<function>:<reason>:<file>…` message, as
 * `: <reason>`; empty for every other code. The reason is what tells one EPROTO from another.
 */
function handshakeReason(code: string, error: ConnectionError): string {
  if (code !== 'EPROTO') return ''
  const said = typeof error.message === 'string' ? error.message : typeof error.cause?.message === 'string' ? error.cause.message : ''
  const reason = /SSL routines:[^:]*:([^:]+)/.exec(said)?.[1]?.trim()
  return reason ? `: ${shorten(reason, 80)}` : ''
}

/**
 * RFC 9110's delay-seconds is digits; a fraction is allowed as many servers send `1.5`. Nothing else
 * is a delay: Number() would also read `-5`, `5e2`, `0x10` and an empty value (as 0, "retry now").
 */
const DELAY = /^\d+(?:\.\d+)?$/
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/**
 * RFC 9110's three HTTP-date forms (5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete
 * `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994` (GMT, though it does not say so).
 * The first also with `UTC` or `+0000` for `GMT`, as some servers and proxies write it: the same
 * instant, not ambiguous. No other zone, nor none (local time, which the server cannot mean).
 */
const HTTP_DATES = [
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (?<day>\d\d) (?<month>[A-Z][a-z]{2}) (?<year>\d{4}) (?<hour>\d\d):(?<minute>\d\d):(?<second>\d\d) (?:GMT|UTC|\+0000)$/,
  /^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\d\d)-(?<month>[A-Z][a-z]{2})-(?<year>\d\d) (?<hour>\d\d):(?<minute>\d\d):(?<second>\d\d) GMT$/,
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?<month>[A-Z][a-z]{2}) (?<day>[ \d]\d) (?<hour>\d\d):(?<minute>\d\d):(?<second>\d\d) (?<year>\d{4})$/,
]

/** The wait a server asks for in ms: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date (past: 0). */
export function parseRetryAfter(headers: HeaderLookup, now = Date.now()): number | undefined {
  // Anything else is undefined, not 0: a malformed value must leave the runtime's backoff in place,
  // not mean "retry at once".
  const ms = delayOf(headers.get('retry-after-ms'), 1)
  if (ms !== undefined) return ms
  const value = headers.get('retry-after')?.trim() ?? ''
  const seconds = delayOf(value, 1000)
  if (seconds !== undefined) return seconds
  const date = parseHttpDate(value, now)
  return date === undefined ? undefined : Math.max(0, date - now)
}

/** `value` in whole ms when it is a delay counted in units of `unitMs`, else undefined. */
function delayOf(value: string | null, unitMs: number): number | undefined {
  const text = value?.trim()
  if (text === undefined || !DELAY.test(text)) return undefined
  // Rounded: 1.1 s is 1100.0000000000002 ms. Digits past what a double holds are Infinity: no delay.
  const ms = Math.round(Number(text) * unitMs)
  return Number.isFinite(ms) ? ms : undefined
}

/**
 * An HTTP-date as epoch ms, or undefined. Read here, not by Date.parse, which takes almost anything
 * (`-5` is the year -5), reads the asctime form in local time and rolls 31 Feb over into March.
 */
function parseHttpDate(value: string, now: number): number | undefined {
  let fields: Record<string, string> | undefined
  for (const form of HTTP_DATES) fields ??= form.exec(value)?.groups
  if (fields === undefined) return undefined
  const day = Number(fields.day)
  const month = MONTHS.indexOf(fields.month ?? '')
  const [hour, minute, second] = [fields.hour, fields.minute, fields.second].map(Number)
  let year = Number(fields.year)
  if (fields.year?.length === 2) {
    // A two-digit year more than 50 years ahead is the most recent past year ending in those digits.
    const thisYear = new Date(now).getUTCFullYear()
    year += thisYear - (thisYear % 100)
    if (year > thisYear + 50) year -= 100
  }
  if (month < 0 || hour === undefined || hour > 23 || minute === undefined || minute > 59 || second === undefined || second > 60) return undefined
  const midnight = Date.UTC(year, month, day)
  // Date.UTC rolls a day past the month's end into the next month: 31 Feb is no date.
  if (new Date(midnight).getUTCDate() !== day) return undefined
  return midnight + ((hour * 60 + minute) * 60 + second) * 1000
}

function parseError(bodyText: string): WireError | undefined {
  try {
    const body = JSON.parse(bodyText) as { error?: unknown; message?: unknown; type?: unknown; code?: unknown }
    if (typeof body.error === 'object' && body.error !== null) return pickError(body.error as Record<string, unknown>)
    if (typeof body.error === 'string') return { message: body.error }
    // vLLM's older answers put the error object at the top level.
    if (typeof body.message === 'string') return pickError(body as Record<string, unknown>)
  } catch {
    // not JSON: the raw text is the detail
  }
  return undefined
}

/** The fields of an error object that have the types `WireError` says; anything else is dropped. */
function pickError(value: Readonly<Record<string, unknown>>): WireError {
  const { message, type, code } = value
  return {
    ...(typeof message === 'string' ? { message } : {}),
    ...(typeof type === 'string' ? { type } : {}),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  }
}

/** Errors the server sent itself (an error event, an error body in place of a stream), not a connection that broke. */
const SENT_BY_SERVER = new WeakSet<LlmError>()

/** An `LlmError` for what the server said: it answered the request (see `isServerError`). */
export function serverError(failure: LlmFailure): LlmError {
  const error = new LlmError(failure)
  SENT_BY_SERVER.add(error)
  return error
}

/** Whether `error` is one the server sent (`serverError`): the request was answered, with a refusal. */
export function isServerError(error: unknown): boolean {
  return error instanceof LlmError && SENT_BY_SERVER.has(error)
}
