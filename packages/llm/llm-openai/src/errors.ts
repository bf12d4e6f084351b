/** HTTP statuses, error bodies and connection failures of OpenAI-compatible servers → `LlmFailure`. */

import type { LlmFailure, LlmFailureCode } from '@rein/llm'
import type { HeaderLookup } from './transport.ts'
import type { WireError } from './wire.ts'
import { cutHead } from '@rein/base'

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
  const detail = error?.message ?? (cutHead(bodyText.trim(), 300) || 'no error body')
  const code = codeForStatus(status, error, detail)
  const failure: LlmFailure = { code, message: `${provider} returned HTTP ${status}: ${detail}`, status }
  if (code === 'INVALID_REQUEST' && isModelNotFound(status, error, detail)) {
    failure.modelNotFound = true
    if (model !== undefined && !detail.includes(model)) failure.message = `${provider} does not serve model "${model}": HTTP ${status}: ${detail}`
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
  const kind = `${wire.code ?? ''} ${wire.type ?? ''}`
  const numeric = statusOf(wire.code)
  let code: LlmFailureCode = 'SERVER'
  if (/rate_limit/.test(kind)) code = 'RATE_LIMIT'
  else if (/insufficient_quota|insufficient_balance/.test(kind)) code = 'QUOTA'
  else if (/overloaded/.test(kind)) code = 'OVERLOADED'
  else if (CONTEXT_OVERFLOW_KIND.test(kind)) code = 'CONTEXT_WINDOW_EXCEEDED'
  // A status says what kind of failure it is: the wording is read only as a 4xx's would be. A 429
  // "too many tokens per minute" is a rate limit, to retry, not a context to compact.
  else if (numeric !== undefined) code = codeForStatus(numeric, wire, message)
  else if (CONTEXT_OVERFLOW.test(message)) code = 'CONTEXT_WINDOW_EXCEEDED'
  else if (/invalid_request/.test(kind)) code = 'INVALID_REQUEST'
  return { code, message: `${provider} reported an error mid-stream: ${message}` }
}

/** An in-stream error's `code` when it is an HTTP error status, a number or its digits ("429"). */
function statusOf(code: WireError['code']): number | undefined {
  const status = typeof code === 'number' ? code : typeof code === 'string' && /^[45]\d\d$/.test(code) ? Number(code) : undefined
  return status !== undefined && status >= 400 && status < 600 ? status : undefined
}

/** Plain words for why a connection could not be made or was lost, by the error code Node gives. */
const CONNECTION_WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate rejected',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate rejected',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate rejected',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate rejected',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate rejected',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate rejected',
  ERR_SSL_WRONG_VERSION_NUMBER: 'no TLS',
}

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
  const words = code ? CONNECTION_WORDS[code] : undefined
  if (words) return { code: 'TRANSPORT', message: `could not reach ${provider}: ${words} at ${url} (${code})${CONNECTION_HINTS[code!] ?? ''}` }
  const said = typeof failed.cause?.message === 'string' ? failed.cause.message : error instanceof Error ? error.message : String(error)
  return { code: 'TRANSPORT', message: `could not reach ${provider} at ${url}: ${code && !said.includes(code) ? `${said} (${code})` : said}` }
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

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: HeaderLookup, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms'))
  if (headers.has('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms
  const value = headers.get('retry-after')
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
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
function pickError(value: Record<string, unknown>): WireError {
  const { message, type, code } = value
  return {
    ...(typeof message === 'string' ? { message } : {}),
    ...(typeof type === 'string' ? { type } : {}),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
  }
}
