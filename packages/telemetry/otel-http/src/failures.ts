/**
 * Export failures as log lines: one warning per kind of failure (refused, timed out, HTTP 404, not
 * HTTP at all, …) for the plugin's lifetime, so a dead endpoint says so once and then keeps quiet.
 */

import type { Logger } from '@deepseek-ai/cordis'
import { shorten } from '@rein/base'
import { DEADLINE_CODE, FLUSH_DROPPED_CODE, GAVE_UP_CODE } from './deadline-agent.ts'

/** Which export failed. */
export type Signal = 'traces' | 'metrics' | 'traces and metrics'

/** A failure sorted into its kind, and the words a log line uses for it. */
interface FailureKind {
  kind: string
  says: string
}

/** Reports failures, logging the first of each kind. */
export interface FailureLog {
  report(signal: Signal, error: unknown): void
}

/** Logs to `logger` under `endpoint` (already free of credentials). Headers are never part of a line. */
export function createFailureLog(logger: Logger, endpoint: string): FailureLog {
  const seen = new Set<string>()
  return {
    report(signal, error) {
      // A connection dispose dropped: dispose said it gave up, and nothing will be sent after it.
      if (fieldsOf(error).code === GAVE_UP_CODE) return
      const { kind, says } = failureKind(error)
      if (seen.has(kind)) return
      seen.add(kind)
      logger.warn('OTLP export of %s to %s failed: %s. Runs are not affected; further failures of this kind are not logged.', signal, endpoint, says)
    },
  }
}

/** Sorts what the OTLP exporter failed with. It reports HTTP failures with a numeric `code`, network ones with Node's string code. */
function failureKind(error: unknown): FailureKind {
  if (error === 'flush-timeout') return { kind: 'flush-timeout', says: 'it did not finish within flushTimeoutMs, and rein stopped waiting for it' }
  const { code, message } = fieldsOf(error)
  if (typeof code === 'number') return { kind: `http-${code}`, says: `the endpoint answered HTTP ${code}${message ? ` (${clip(message)})` : ''}` }
  // The SDK's idle timeout, or the connection's deadline (deadline-agent.ts): one kind, one line.
  if (message === 'Request timed out' || code === DEADLINE_CODE) return { kind: 'timeout', says: 'the endpoint did not answer in time' }
  if (code === FLUSH_DROPPED_CODE) return { kind: 'dropped', says: 'a flush stopped waiting after flushTimeoutMs and dropped the connections still open; what they carried was not sent' }
  if (message === 'Export failed with retryable status') return { kind: 'http-retryable', says: 'the endpoint kept answering HTTP 429, 502, 503 or 504' }
  if (typeof code === 'string') {
    if (code.startsWith('HPE_')) return { kind: 'not-http', says: `the endpoint's answer is not HTTP (${code})` }
    return { kind: code, says: TLS[code]?.(code) ?? `${NETWORK[code] ?? 'network error'} (${code})` }
  }
  if (message?.includes('exceeded size limit')) return { kind: 'oversized', says: 'the endpoint\'s answer was too large' }
  if (message === 'Concurrent export limit reached') return { kind: 'busy', says: 'too many exports were waiting on the endpoint; this batch was dropped' }
  return { kind: `other:${clip(message ?? String(error))}`, says: clip(message ?? String(error)) }
}

const NETWORK: Record<string, string> = {
  ECONNREFUSED: 'nothing listens there',
  ECONNRESET: 'the endpoint closed the connection',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (yet)',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection broke',
}

/** TLS failures, which Node reports with OpenSSL's codes: a "network error" would send people looking at the network. */
const untrusted = (code: string) => `the endpoint's TLS certificate is not trusted (${code}); to trust the CA that issued it, set OTEL_EXPORTER_OTLP_CERTIFICATE to its PEM file`
const TLS: Record<string, (code: string) => string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: untrusted,
  SELF_SIGNED_CERT_IN_CHAIN: untrusted,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: untrusted,
  UNABLE_TO_GET_ISSUER_CERT: untrusted,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: untrusted,
  CERT_HAS_EXPIRED: (code) => `the endpoint's TLS certificate has expired (${code})`,
  CERT_NOT_YET_VALID: (code) => `the endpoint's TLS certificate is not valid yet (${code})`,
  ERR_TLS_CERT_ALTNAME_INVALID: (code) => `the endpoint's TLS certificate does not name this host (${code})`,
  EPROTO: (code) => `the TLS handshake failed (${code}); if the endpoint speaks plain HTTP, give it as http://`,
}

function fieldsOf(error: unknown): { code?: unknown; message?: string } {
  if (typeof error !== 'object' || error === null) return typeof error === 'string' ? { message: error } : {}
  const { code, message } = error as { code?: unknown; message?: unknown }
  return { code, ...(typeof message === 'string' && message !== '' ? { message } : {}) }
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return shorten(line, 120)
}
