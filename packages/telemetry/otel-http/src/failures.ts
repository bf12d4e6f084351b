/**
 * Export failures as log lines: one warning per kind of failure (refused, timed out, HTTP 404, not
 * HTTP at all, …) for the plugin's lifetime, so a dead endpoint says so once and then keeps quiet.
 * While a flush is under way the lines wait for its end, so one line names every signal that failed
 * with its kind at one endpoint: a flush exports traces and metrics together, and a dead endpoint
 * fails both. Signals sent to different endpoints (the per-signal variables) get a line each.
 */

import type { Logger } from '@deepseek-ai/cordis'
import { connectionWords, isTlsFailure, shorten } from '@rein/base'
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
  /**
   * Holds the lines of new kinds until the returned release is called (by every holder, once each
   * counts): a flush holds them while it waits, so a kind both signals fail with is one line naming both.
   */
  hold(): () => void
}

/** A kind's line not logged yet: its words, the endpoint it names, and the signals that failed with it there so far. */
interface HeldLine {
  kind: string
  says: string
  endpoint: string
  traces: boolean
  metrics: boolean
}

/**
 * The URL each signal is sent to, as log lines show it (already free of credentials and query), and
 * the per-signal variable whose URL metrics go to as given, when they do.
 */
export type FailureEndpoints = Readonly<Record<'traces' | 'metrics', string> & { metricsVariable?: string }>

/**
 * Logs to `logger`, each line naming the endpoint its signals were sent to. A kind is one line per
 * endpoint: signals sharing one failing alike are one line naming both; signals sent apart, a line
 * each. Headers are never part of a line; what the endpoint said (an HTTP reason phrase, an error's
 * message) goes through `mask` first, since a collector may quote the key it refused.
 */
export function createFailureLog(logger: Logger, endpoints: FailureEndpoints, mask: (text: string) => string): FailureLog {
  const seen = new Set<string>()
  const held = new Map<string, HeldLine>()
  let holders = 0
  const warn = (signal: Signal, endpoint: string, { kind, says }: FailureKind) => {
    logger.warn('OTLP export of %s to %s failed: %s%s. Runs are not affected; further failures of this kind are not logged.', signal, endpoint, mask(says), hintFor(signal, kind, endpoints.metricsVariable))
  }
  const logHeld = () => {
    for (const line of held.values()) warn(signalOf(line), line.endpoint, line)
    held.clear()
  }
  const reportAt = (signal: Signal, endpoint: string, failure: FailureKind) => {
    const { kind, says } = failure
    const key = `${kind}\n${endpoint}`
    const line = held.get(key)
    if (line) {
      addSignal(line, signal)
      return
    }
    if (seen.has(key)) return
    seen.add(key)
    if (holders > 0) held.set(key, { kind, says, endpoint, traces: signal !== 'metrics', metrics: signal !== 'traces' })
    else warn(signal, endpoint, failure)
  }
  return {
    report(signal, error) {
      // A connection dispose dropped: dispose said it gave up, and nothing will be sent after it.
      if (fieldsOf(error).code === GAVE_UP_CODE) return
      const kind = failureKind(error)
      // Both signals at once (a flush that gave up): one report per endpoint they went to.
      if (signal === 'traces and metrics' && endpoints.traces !== endpoints.metrics) {
        reportAt('traces', endpoints.traces, kind)
        reportAt('metrics', endpoints.metrics, kind)
      } else {
        reportAt(signal, signal === 'metrics' ? endpoints.metrics : endpoints.traces, kind)
      }
    },
    hold() {
      holders++
      let released = false
      return () => {
        if (released) return
        released = true
        if (--holders === 0) logHeld()
      }
    },
  }
}

/**
 * What to do about a failure, when the failure says: metrics alone answered 404 under the base URL
 * is an endpoint that takes traces only (Jaeger), which would warn on every run; at a per-signal
 * URL, more likely a URL given without its path.
 */
function hintFor(signal: Signal, kind: string, metricsVariable: string | undefined): string {
  if (signal !== 'metrics' || kind !== 'http-404') return ''
  if (metricsVariable !== undefined) return `; ${metricsVariable} is used as given: give the full URL (…/v1/metrics)`
  return '; if it takes traces only (as Jaeger does), set OTEL_METRICS_EXPORTER=none'
}

/** Marks `signal` as failed with the line's kind; `traces and metrics` (a flush that timed out) marks both. */
function addSignal(line: HeldLine, signal: Signal): void {
  if (signal !== 'metrics') line.traces = true
  if (signal !== 'traces') line.metrics = true
}

/** Traces first, whichever failed first: the same failure reads the same each time. */
function signalOf(line: HeldLine): Signal {
  if (line.traces && line.metrics) return 'traces and metrics'
  return line.traces ? 'traces' : 'metrics'
}

/** Sorts what the OTLP exporter failed with. It reports HTTP failures with a numeric `code`, network ones with Node's string code. */
function failureKind(error: unknown): FailureKind {
  if (error === 'flush-timeout') return { kind: 'flush-timeout', says: 'it did not finish within flushTimeoutMs, and rein stopped waiting for it' }
  const { code, message } = fieldsOf(error)
  if (typeof code === 'number') return { kind: `http-${code}`, says: `the endpoint answered HTTP ${code}${message ? ` (${clip(message)})` : ''}` }
  // The SDK's idle timeout, or the connection's deadline (deadline-agent.ts): one kind, one line.
  if (message === 'Request timed out' || code === DEADLINE_CODE) return { kind: 'timeout', says: 'the endpoint did not answer in time' }
  if (code === FLUSH_DROPPED_CODE) return { kind: 'dropped', says: 'a flush stopped waiting after flushTimeoutMs and dropped the connections still open; what they carried was not sent' }
  if (message === 'Export failed with retryable status') return { kind: 'http-retryable', says: 'the endpoint answered HTTP 429, 502, 503 or 504 (busy or unavailable), and no retry got through in time' }
  if (typeof code === 'string') {
    if (code.startsWith('HPE_')) return { kind: 'not-http', says: `the endpoint's answer is not HTTP (${code})` }
    return { kind: code, says: connectionSays(code) }
  }
  if (message?.includes('exceeded size limit')) return { kind: 'oversized', says: 'the endpoint\'s answer was too large' }
  if (message === 'Concurrent export limit reached') return { kind: 'busy', says: 'too many exports were waiting on the endpoint; this batch was dropped' }
  return { kind: `other:${clip(message ?? String(error))}`, says: clip(message ?? String(error)) }
}

/**
 * A connection or TLS failure in @rein/base's words, with what to do about it here. A TLS failure
 * is never a "network error": that would send people looking at the network.
 */
function connectionSays(code: string): string {
  const words = connectionWords(code) ?? (isTlsFailure(code) ? 'TLS failure' : 'network error')
  return `${words} (${code})${HINTS.get(code) ?? ''}`
}

/** An endpoint whose CA this process does not know: the SDK's variable tells it. */
const TRUST_ITS_CA = '; to trust the CA that issued it, set OTEL_EXPORTER_OTLP_CERTIFICATE to its PEM file'
/** A handshake an endpoint could not have: it likely speaks plain HTTP. */
const PLAIN_HTTP = '; if the endpoint speaks plain HTTP, give it as http://'
const HINTS = new Map<string, string>([
  ['DEPTH_ZERO_SELF_SIGNED_CERT', TRUST_ITS_CA],
  ['SELF_SIGNED_CERT_IN_CHAIN', TRUST_ITS_CA],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', TRUST_ITS_CA],
  ['UNABLE_TO_GET_ISSUER_CERT', TRUST_ITS_CA],
  ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', TRUST_ITS_CA],
  ['EPROTO', PLAIN_HTTP],
  ['ERR_SSL_WRONG_VERSION_NUMBER', PLAIN_HTTP],
])

function fieldsOf(error: unknown): { code?: unknown; message?: string } {
  if (typeof error !== 'object' || error === null) return typeof error === 'string' ? { message: error } : {}
  const { code, message } = error as { code?: unknown; message?: unknown }
  return { code, ...(typeof message === 'string' && message !== '' ? { message } : {}) }
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return shorten(line, 120)
}
