/** Failure codes of the LLM seam, which of them are worth retrying, and the error that carries one. */

import { ReinError, isReinError, messageOf } from '@rein/base'

/** Every failure code of the seam; the type below is derived from this one list. */
const LLM_FAILURE_CODES = [
  'AUTH', 'QUOTA', 'RATE_LIMIT', 'SERVER', 'OVERLOADED', 'TIMEOUT', 'TRANSPORT', 'STREAM_CLOSED',
  'MALFORMED_RESPONSE', 'CONTEXT_WINDOW_EXCEEDED', 'EMPTY_RESPONSE', 'INVALID_REQUEST', 'UNSUPPORTED',
  'UNSUPPORTED_REASONING_EFFORT', 'MISSING_CREDENTIAL', 'INVALID_CREDENTIAL', 'ABORTED', 'NO_ADAPTER',
] as const

/** The code of an `LlmFailure`: one of the seam's fixed list, whatever the provider. */
export type LlmFailureCode = (typeof LLM_FAILURE_CODES)[number]

/** A failure as data: serializable, free of secrets, the same shape whatever the provider. */
export interface LlmFailure {
  code: LlmFailureCode
  message: string
  /** HTTP status, when there was a response. */
  status?: number
  /** What the provider asked us to wait (Retry-After), in milliseconds. */
  retryAfterMs?: number
  requestId?: string
  /**
   * The provider does not serve the requested model (HTTP 404 "model not found" and the like). The
   * code stays `INVALID_REQUEST`, but another route may serve its model, so the chain falls back.
   */
  modelNotFound?: true
  /**
   * The same request to this provider would fail the same way (a host name that does not resolve),
   * whatever its code: not retried, though the chain still falls back to another route.
   */
  permanent?: true
}

const RETRYABLE: ReadonlySet<LlmFailureCode> = new Set([
  'RATE_LIMIT', 'SERVER', 'OVERLOADED', 'TIMEOUT', 'TRANSPORT', 'STREAM_CLOSED', 'EMPTY_RESPONSE',
])

/** Transient failures: the same request may succeed later. */
export function isRetryable(code: LlmFailureCode): boolean {
  return RETRYABLE.has(code)
}

/** Whether this failure is worth sending the same request again: its code is transient and the adapter did not mark it permanent. */
export function isRetryableFailure(failure: LlmFailure): boolean {
  return isRetryable(failure.code) && failure.permanent !== true
}

/** What adapters throw. `failure` is the data; `code` mirrors `failure.code`. */
export class LlmError extends ReinError<LlmFailureCode> {
  readonly failure: LlmFailure

  constructor(failure: LlmFailure, options: { cause?: unknown } = {}) {
    super(failure.code, failure.message, { cause: options.cause, details: { ...failure } })
    this.failure = Object.freeze({ ...failure })
  }
}

const CODES: ReadonlySet<string> = new Set(LLM_FAILURE_CODES)

/** Whether `code` is one of the seam's failure codes. */
export function isFailureCode(code: unknown): code is LlmFailureCode {
  return typeof code === 'string' && CODES.has(code)
}

/** Any thrown value as a failure. Unknown errors count as `TRANSPORT`: something between us and the model broke. */
export function toFailure(error: unknown): LlmFailure {
  if (isReinError(error)) {
    const failure = (error as Partial<LlmError>).failure
    if (failure && isFailureCode(failure.code)) return cleanFailure(failure)
    if (isFailureCode(error.code)) return { code: error.code, message: error.message }
  }
  // messageOf, not String(): a thrown null-prototype object or Proxy has no string form, and this runs inside the catch that keeps `stream` from throwing.
  return { code: 'TRANSPORT', message: messageOf(error) || 'the request failed without a message' }
}

/**
 * `failure` with only the fields of an `LlmFailure`, each of its type: what an adapter put there
 * (NaN for a status, a function, a bigint) goes, so every attempt record is JSON the log takes.
 */
export function cleanFailure(failure: LlmFailure): LlmFailure {
  const { code, message, status, retryAfterMs, requestId, modelNotFound, permanent } = failure
  return {
    code: isFailureCode(code) ? code : 'TRANSPORT',
    message: typeof message === 'string' && message !== '' ? message : 'the request failed without a message',
    ...(Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599 ? { status } : {}),
    ...(typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? { retryAfterMs } : {}),
    ...(typeof requestId === 'string' ? { requestId } : {}),
    ...(modelNotFound === true ? { modelNotFound } : {}),
    ...(permanent === true ? { permanent } : {}),
  }
}
