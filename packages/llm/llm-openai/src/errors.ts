/** HTTP statuses and error bodies of OpenAI-compatible servers → `LlmFailure`. */

import type { LlmFailure, LlmFailureCode } from '@rein/llm'
import type { WireError } from './wire.ts'

const CONTEXT_LENGTH = /maximum context length|context length|context window|too many tokens|prompt is too long|reduce the length/i

/** `provider` names the server in messages (e.g. "OpenAI", "DeepSeek"). */
export function failureFromResponse(provider: string, status: number, bodyText: string, headers: Headers): LlmFailure {
  const error = parseError(bodyText)
  const detail = error?.message ?? (bodyText.trim().slice(0, 300) || 'no error body')
  const failure: LlmFailure = {
    code: codeForStatus(status, error, detail),
    message: `${provider} returned HTTP ${status}: ${detail}`,
    status,
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
  if (/context_length_exceeded/.test(kind) || CONTEXT_LENGTH.test(detail)) return 'CONTEXT_WINDOW_EXCEEDED'
  return 'INVALID_REQUEST'
}

/** An `{"error": …}` event inside a 200 stream. */
export function failureFromStreamError(provider: string, error: WireError): LlmFailure {
  const message = error.message ?? 'unknown error'
  const kind = `${error.code ?? ''} ${error.type ?? ''}`
  let code: LlmFailureCode = 'SERVER'
  if (/rate_limit/.test(kind)) code = 'RATE_LIMIT'
  else if (/insufficient_quota|insufficient_balance/.test(kind)) code = 'QUOTA'
  else if (/overloaded/.test(kind)) code = 'OVERLOADED'
  else if (/context_length_exceeded/.test(kind) || CONTEXT_LENGTH.test(message)) code = 'CONTEXT_WINDOW_EXCEEDED'
  else if (/invalid_request/.test(kind)) code = 'INVALID_REQUEST'
  return { code, message: `${provider} reported an error mid-stream: ${message}` }
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfter(headers: Headers, now = Date.now()): number | undefined {
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
    const body = JSON.parse(bodyText) as { error?: unknown; message?: unknown }
    if (typeof body.error === 'object' && body.error !== null) return body.error as WireError
    if (typeof body.error === 'string') return { message: body.error }
    if (typeof body.message === 'string') return { message: body.message }
  } catch {
    // not JSON: the raw text is the detail
  }
  return undefined
}
