// The warning a failed export logs: once per kind, naming every signal that failed with it together.
import type { Logger } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { createFailureLog, type FailureEndpoints } from '../src/failures.ts'

/** A logger that keeps its warnings, `%s` filled in. */
function keptWarnings(endpoints: FailureEndpoints = { traces: 'http://127.0.0.1:4318', metrics: 'http://127.0.0.1:4318' }) {
  const lines: string[] = []
  const logger = { warn: (format: string, ...args: unknown[]) => { lines.push(args.reduce<string>((line, arg) => line.replace('%s', String(arg)), format)) } }
  return { lines, log: createFailureLog(logger as unknown as Logger, endpoints, (text) => text) }
}

/** Each signal to an endpoint of its own (the per-signal variables). */
const APART = { traces: 'http://127.0.0.1:4318/v1/traces', metrics: 'http://127.0.0.1:9090/otlp/metrics' }

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4318'), { code: 'ECONNREFUSED' })
const notFound = () => ({ code: 404, message: 'Not Found' })

describe('the failure log', () => {
  it('tells a metrics 404 under the base URL to set OTEL_METRICS_EXPORTER=none if the endpoint takes traces only (Jaeger)', () => {
    const { lines, log } = keptWarnings()
    log.report('metrics', notFound())
    expect(lines).toEqual([expect.stringContaining('failed: the endpoint answered HTTP 404 (Not Found); if it takes traces only (as Jaeger does), set OTEL_METRICS_EXPORTER=none.') as string])
  })

  it('tells a metrics 404 at a per-signal URL that the URL is used as given, not the Jaeger advice', () => {
    const { lines, log } = keptWarnings({ ...APART, metricsVariable: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' })
    log.report('metrics', notFound())
    expect(lines).toEqual([expect.stringContaining('HTTP 404 (Not Found); OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is used as given: give the full URL (…/v1/metrics).') as string])
    expect(lines[0]).not.toContain('Jaeger')
  })

  it('gives a traces 404 no metrics advice', () => {
    const { lines, log } = keptWarnings()
    log.report('traces', notFound())
    expect(lines[0]).not.toContain('OTEL_METRICS_EXPORTER')
  })

  it('names traces and metrics in one warning when both fail alike while a flush is under way', () => {
    const { lines, log } = keptWarnings()
    const release = log.hold()
    log.report('traces', refused())
    log.report('metrics', refused())
    expect(lines).toEqual([])
    release()
    expect(lines).toEqual(['OTLP export of traces and metrics to http://127.0.0.1:4318 failed: connection refused (ECONNREFUSED). Runs are not affected; further failures of this kind are not logged.'])
  })

  it('names them in that order whichever failed first, and warns of neither again', () => {
    const { lines, log } = keptWarnings()
    const release = log.hold()
    log.report('metrics', refused())
    log.report('traces', refused())
    log.report('metrics', refused())
    release()
    log.report('traces', refused())
    log.report('metrics', refused())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^OTLP export of traces and metrics to /)
  })

  it('names only the signal that failed, and gives each kind its own line', () => {
    const { lines, log } = keptWarnings()
    const release = log.hold()
    log.report('traces', refused())
    log.report('metrics', notFound())
    release()
    expect(lines.map((line) => line.slice(0, line.indexOf(' to ')))).toEqual(['OTLP export of traces', 'OTLP export of metrics'])
    expect(lines[1]).toContain('the endpoint answered HTTP 404 (Not Found)')
  })

  it('holds the lines until the last of several flushes under way ends; a release called twice counts once', () => {
    const { lines, log } = keptWarnings()
    const first = log.hold()
    const second = log.hold()
    log.report('traces', refused())
    first()
    first()
    log.report('metrics', refused())
    expect(lines).toEqual([])
    second()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^OTLP export of traces and metrics to /)
  })

  it('warns at once outside a flush, naming the signal that failed; the other failing alike later is not warned of again', () => {
    const { lines, log } = keptWarnings()
    log.report('traces', refused())
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^OTLP export of traces to /)
    const release = log.hold()
    log.report('metrics', refused())
    release()
    expect(lines).toHaveLength(1)
  })

  it('keeps a kind of its own for each network and TLS code, and words them with @rein/base\'s words and its own hints', () => {
    const { lines, log } = keptWarnings()
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'EPROTO', 'ERR_TLS_SOMETHING_NEW', 'EWHATEVER']) log.report('traces', Object.assign(new Error(code), { code }))
    log.report('traces', Object.assign(new Error('again'), { code: 'ECONNREFUSED' }))
    expect(lines.map((line) => line.slice(line.indexOf('failed: ') + 8, line.indexOf('. Runs are')))).toEqual([
      'connection refused (ECONNREFUSED)',
      'connection reset (ECONNRESET)',
      'untrusted self-signed TLS certificate (DEPTH_ZERO_SELF_SIGNED_CERT); to trust the CA that issued it, set OTEL_EXPORTER_OTLP_CERTIFICATE to its PEM file',
      'expired TLS certificate (CERT_HAS_EXPIRED)',
      'TLS handshake failed (EPROTO); if the endpoint speaks plain HTTP, give it as http://',
      'TLS failure (ERR_TLS_SOMETHING_NEW)',
      'network error (EWHATEVER)',
    ])
  })

  it('gives each signal its own line, naming its own endpoint, when the two go to different endpoints and fail alike', () => {
    const { lines, log } = keptWarnings(APART)
    const release = log.hold()
    log.report('traces', refused())
    log.report('metrics', refused())
    log.report('traces', refused())
    release()
    log.report('metrics', refused())
    expect(lines.map((line) => line.slice(0, line.indexOf(' failed: ')))).toEqual([`OTLP export of traces to ${APART.traces}`, `OTLP export of metrics to ${APART.metrics}`])
  })

  it('splits a flush that gave up on both signals into a line per endpoint when they differ', () => {
    const { lines, log } = keptWarnings(APART)
    log.report('traces and metrics', 'flush-timeout')
    expect(lines.map((line) => line.slice(0, line.indexOf(' failed: ')))).toEqual([`OTLP export of traces to ${APART.traces}`, `OTLP export of metrics to ${APART.metrics}`])
  })

  it('still writes one line naming both when a flush that gave up sent both to one endpoint', () => {
    const { lines, log } = keptWarnings()
    log.report('traces and metrics', 'flush-timeout')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^OTLP export of traces and metrics to http:\/\/127\.0\.0\.1:4318 failed: it did not finish/)
  })
})
