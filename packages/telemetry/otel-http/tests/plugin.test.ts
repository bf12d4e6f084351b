// Loading the plugin: where it sends (Config beats the environment), headers, resource, bad Config, nothing when off.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Context } from '@deepseek-ai/cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ENDPOINT_ENV } from '../src/index.ts'
import { decodeHistograms, decodeTraces } from './otlp.ts'
import { T0, captureLogs, cost, endpoint, llmEnd, llmStart, loadOtelHttp, runEnd, runStart, scopeOf, spend, standInTelemetry, type ConfigInput } from './harness.ts'

const TRACES_ENV = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
const METRICS_ENV = 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'

afterEach(() => {
  vi.unstubAllEnvs()
})

/**
 * Loads the plugin with a stand-in ctx.telemetry, exports one run, disposes. With `attempt`, the run
 * has one answered attempt, so there are metrics to push; without, it is empty.
 */
async function exportRun(config: ConfigInput, attempt = false) {
  const root = new Context()
  const logs = captureLogs(root)
  const telemetry = standInTelemetry(root)
  const fiber = await loadOtelHttp(root, config)
  const registered = telemetry.sinks.size
  const run = scopeOf('run-1')
  const usage = attempt ? { inputTokens: 10, outputTokens: 2 } : undefined
  const attempts = attempt ? [llmStart(run, T0 + 1), llmEnd(run, T0 + 1, T0 + 5, { finishReason: 'stop', usage })] : []
  telemetry.emit(runStart(run, T0), ...attempts, runEnd(run, T0, T0 + 6, cost(spend(usage))))
  await fiber.dispose()
  return { logs, telemetry, registered }
}

describe('where it sends', () => {
  it('sends traces to <endpoint>/v1/traces and metrics to <endpoint>/v1/metrics, keeping the endpoint\'s path', async () => {
    const server = await endpoint()
    const headers = { authorization: 'Bearer HEADER-SECRET', 'x-tenant': 'team-a' }
    const { logs } = await exportRun({ endpoint: `${server.url}/otlp/`, headers })
    expect(server.requests.map((request) => request.path)).toEqual(['/otlp/v1/traces'])
    expect(server.requests[0]!.headers).toMatchObject({ authorization: 'Bearer HEADER-SECRET', 'x-tenant': 'team-a', 'content-type': 'application/json' })
    expect(logs('info')).toEqual([`exporting traces and metrics to ${server.url}/otlp (from Config endpoint)`])
    expect(logs().join('\n')).not.toContain('HEADER-SECRET')
  })

  it('takes Config endpoint over OTEL_EXPORTER_OTLP_ENDPOINT, and the variable alone when Config has none', async () => {
    const [configured, fromEnv] = [await endpoint(), await endpoint()]
    vi.stubEnv(ENDPOINT_ENV, fromEnv.url)
    await exportRun({ endpoint: configured.url })
    expect([configured.traces().length, fromEnv.traces().length]).toEqual([1, 0])
    const { logs } = await exportRun({})
    expect([configured.traces().length, fromEnv.traces().length]).toEqual([1, 1])
    expect(logs('info')).toEqual([`exporting traces and metrics to ${fromEnv.url} (from ${ENDPOINT_ENV})`])
  })

  it('registers nothing and says so in one info line when neither is set', async () => {
    vi.stubEnv(ENDPOINT_ENV, '')
    const { logs, registered } = await exportRun({})
    expect(registered).toBe(0)
    expect(logs()).toEqual([`OpenTelemetry export is off: no endpoint is set: neither Config endpoint, ${ENDPOINT_ENV}, ${TRACES_ENV} nor ${METRICS_ENV}`])
  })

  it('still says an exporter variable is not understood when no endpoint is set (console: rein prints no spans there either)', async () => {
    vi.stubEnv(ENDPOINT_ENV, '')
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'console')
    const { logs, registered } = await exportRun({})
    expect(registered).toBe(0)
    expect(logs('warn')).toEqual(['OTEL_TRACES_EXPORTER=console: rein understands only otlp and none there; read as otlp'])
  })

  it('stays off, warning why, when the variable is not an http(s) URL: rein still starts, and the CLI shows the warning', async () => {
    vi.stubEnv(ENDPOINT_ENV, 'localhost:4318')
    const { logs, registered } = await exportRun({})
    expect(registered).toBe(0)
    expect(logs('warn')).toEqual([`OpenTelemetry export is off: ${ENDPOINT_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318)`])
    expect(logs()).toHaveLength(1)
  })

  it.each(['/v1/traces', '/v1/metrics/'])('stays off, warning why, when the variable ends in %s: it is the base URL, rein adds each signal\'s path', async (suffix) => {
    const server = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, `${server.url}${suffix}`)
    const { logs, registered } = await exportRun({})
    expect(registered).toBe(0)
    expect(logs('warn')).toEqual([`OpenTelemetry export is off: ${ENDPOINT_ENV} ends in ${suffix.replace(/\/$/, '')}, but it is the base URL: rein sends to <base>/v1/traces and <base>/v1/metrics itself; give ${server.url}`])
    expect(server.requests).toEqual([])
  })

  it.each(['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_METRICS_HEADERS'])(
    'stays off, warning which header is bad, when %s holds a value HTTP cannot carry (every export failed as a network error)',
    async (variable) => {
      const server = await endpoint()
      vi.stubEnv(variable, 'x-api-key=HEADER-SECRET%0Ax-injected%3A%201,x-tenant=team-a')
      const { logs, registered } = await exportRun({ endpoint: server.url })
      expect(registered).toBe(0)
      expect(logs('warn')).toEqual([`OpenTelemetry export is off: ${variable}: header "x-api-key": the value holds a line break or another character an HTTP header cannot carry`])
      expect(logs().join('\n')).not.toContain('HEADER-SECRET')
      expect(server.requests).toEqual([])
    },
  )

  it('takes a header the per-signal variables both set over the general one, as the exporter does: a bad general value they override is no problem', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', 'x-api-key=bad%0Avalue')
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'x-api-key=for-traces')
    vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_HEADERS', 'x-api-key=for-metrics')
    const { registered } = await exportRun({ endpoint: server.url })
    expect(registered).toBe(1)
    expect(server.requests[0]!.headers).toMatchObject({ 'x-api-key': 'for-traces' })
  })

  it('sends the headers OTEL_EXPORTER_OTLP_HEADERS names, unless Config sets the same header', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', 'x-api-key=bad%0Avalue,x-tenant=team-a')
    await exportRun({ endpoint: server.url, headers: { 'x-api-key': 'from-config' } })
    expect(server.requests[0]!.headers).toMatchObject({ 'x-api-key': 'from-config', 'x-tenant': 'team-a' })
  })
})

/** `exportRun` of a run with one answered attempt. */
const exportRunWithAttempt = (config: ConfigInput) => exportRun(config, true)

/** An endpoint that takes traces and answers 404 to metrics, as Jaeger does; closed after the test. */
async function tracesOnlyEndpoint() {
  const paths: string[] = []
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      paths.push(request.url ?? '')
      if (request.url === '/v1/traces') response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      else response.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths }
}
const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map((close) => close()))
})

/** The paths a capture server was sent, in order. */
const pathsOf = (server: { requests: readonly { path: string }[] }) => server.requests.map((request) => request.path)

describe('the per-signal endpoint variables', () => {
  // Whatever the machine running the tests has set.
  beforeEach(() => {
    for (const variable of [ENDPOINT_ENV, TRACES_ENV, METRICS_ENV]) vi.stubEnv(variable, '')
  })

  it.each([
    ['traces', TRACES_ENV, '/custom/traces-in', 'metrics', METRICS_ENV],
    // The spec's own example: a per-signal URL ending in its signal's path is the full URL, used as it is.
    ['metrics', METRICS_ENV, '/v1/metrics', 'traces', TRACES_ENV],
  ])('sends %s to exactly %s set alone, nothing appended; the other signal is off for want of an endpoint, said in the info line', async (signal, variable, path, other, otherVariable) => {
    const server = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, '')
    vi.stubEnv(variable, `${server.url}${path}`)
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(1)
    expect(new Set(pathsOf(server))).toEqual(new Set([path]))
    expect(logs('warn')).toEqual([])
    expect(logs('info')).toEqual([`exporting ${signal} to ${server.url}${path} (from ${variable}); ${other} are off (no endpoint for ${other}: neither ${otherVariable} nor ${ENDPOINT_ENV} is set)`])
  })

  it('sends spans that decode, to a per-signal URL alone', async () => {
    const server = await endpoint()
    vi.stubEnv(TRACES_ENV, `${server.url}/v1/traces`)
    await exportRunWithAttempt({})
    expect(pathsOf(server)).toEqual(['/v1/traces'])
    expect(decodeTraces(server.traces()).map((span) => span.name)).toContain('invoke_agent main')
  })

  it('sends each signal to its own server when both per-signal variables are set', async () => {
    const [traces, metrics] = [await endpoint(), await endpoint()]
    vi.stubEnv(TRACES_ENV, `${traces.url}/a/traces`)
    vi.stubEnv(METRICS_ENV, `${metrics.url}/b/metrics/`)
    const { logs } = await exportRunWithAttempt({})
    expect(pathsOf(traces)).toEqual(['/a/traces'])
    expect(new Set(pathsOf(metrics))).toEqual(new Set(['/b/metrics/']))
    expect(logs('info')).toEqual([`exporting traces to ${traces.url}/a/traces (from ${TRACES_ENV}) and metrics to ${metrics.url}/b/metrics/ (from ${METRICS_ENV})`])
  })

  it('takes OTEL_EXPORTER_OTLP_METRICS_ENDPOINT over the base URL for metrics only: traces still go to <base>/v1/traces', async () => {
    const [base, override] = [await endpoint(), await endpoint()]
    vi.stubEnv(ENDPOINT_ENV, `${base.url}/otlp`)
    vi.stubEnv(METRICS_ENV, `${override.url}/metrics-in`)
    const { logs } = await exportRunWithAttempt({})
    expect(pathsOf(base)).toEqual(['/otlp/v1/traces'])
    expect(new Set(pathsOf(override))).toEqual(new Set(['/metrics-in']))
    expect(logs('info')).toEqual([`exporting traces to ${base.url}/otlp/v1/traces (from ${ENDPOINT_ENV}) and metrics to ${override.url}/metrics-in (from ${METRICS_ENV})`])
  })

  it('lets Config endpoint beat the per-signal variables too', async () => {
    const [configured, fromEnv] = [await endpoint(), await endpoint()]
    vi.stubEnv(TRACES_ENV, `${fromEnv.url}/v1/traces`)
    vi.stubEnv(METRICS_ENV, `${fromEnv.url}/v1/metrics`)
    const { logs } = await exportRunWithAttempt({ endpoint: configured.url })
    expect(new Set(pathsOf(configured))).toEqual(new Set(['/v1/traces', '/v1/metrics']))
    expect(fromEnv.requests).toEqual([])
    expect(logs('info')).toEqual([`exporting traces and metrics to ${configured.url} (from Config endpoint)`])
  })

  it('turns only its signal off, warning with the variable\'s name (never its value), when a per-signal variable is not an http(s) URL; the other still goes to the base URL', async () => {
    const base = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, base.url)
    vi.stubEnv(TRACES_ENV, 'localhost:4318/v1/traces?api_key=URL-SECRET')
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(1)
    expect(new Set(pathsOf(base))).toEqual(new Set(['/v1/metrics']))
    const reason = `${TRACES_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318/v1/traces)`
    expect(logs('warn')).toEqual([`OpenTelemetry export of traces is off: ${reason}`])
    expect(logs('info')).toEqual([`exporting metrics to ${base.url} (from ${ENDPOINT_ENV}); traces are off (${reason})`])
    expect(logs().join('\n')).not.toContain('URL-SECRET')
  })

  it('registers nothing, warning for each signal, when a per-signal variable is bad and the other signal has no endpoint', async () => {
    vi.stubEnv(METRICS_ENV, 'ftp://127.0.0.1:4318/v1/metrics')
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(0)
    expect(logs('warn')).toEqual([`OpenTelemetry export is off: no endpoint for traces: neither ${TRACES_ENV} nor ${ENDPOINT_ENV} is set; ${METRICS_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318/v1/metrics)`])
    expect(logs()).toHaveLength(1)
  })

  it('needs no endpoint, and says nothing of a bad one, for a signal its exporter variable turns off', async () => {
    const server = await endpoint()
    vi.stubEnv(TRACES_ENV, `${server.url}/v1/traces`)
    vi.stubEnv(METRICS_ENV, 'not a url')
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    const { logs } = await exportRunWithAttempt({})
    expect(pathsOf(server)).toEqual(['/v1/traces'])
    expect(logs('warn')).toEqual([])
    expect(logs('info')).toEqual([`exporting traces to ${server.url}/v1/traces (from ${TRACES_ENV}); metrics are off (OTEL_METRICS_EXPORTER=none)`])
  })

  it('stays off with one info line when the only per-signal variable set is of a signal turned off', async () => {
    vi.stubEnv(TRACES_ENV, 'http://127.0.0.1:4318/v1/traces')
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'none')
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(0)
    expect(logs()).toEqual([`OpenTelemetry export is off: OTEL_TRACES_EXPORTER=none; no endpoint for metrics: neither ${METRICS_ENV} nor ${ENDPOINT_ENV} is set`])
    expect(logs('warn')).toEqual([])
  })

  it('keeps refusing a base URL ending in /v1/traces for the signal that uses it, while a per-signal URL so ending is fine', async () => {
    const server = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, `${server.url}/v1/traces`)
    vi.stubEnv(TRACES_ENV, `${server.url}/v1/traces`)
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(1)
    expect(pathsOf(server)).toEqual(['/v1/traces'])
    expect(logs('warn')).toEqual([`OpenTelemetry export of metrics is off: ${ENDPOINT_ENV} ends in /v1/traces, but it is the base URL: rein sends to <base>/v1/traces and <base>/v1/metrics itself; give ${server.url}`])
  })

  it('names each signal\'s own URL in its failure line when the two go to different endpoints', async () => {
    const [traces, metrics] = [await endpoint({ kind: 'status', status: 404 }), await endpoint({ kind: 'status', status: 404 })]
    vi.stubEnv(TRACES_ENV, `${traces.url}/t`)
    vi.stubEnv(METRICS_ENV, `${metrics.url}/m`)
    const { logs } = await exportRunWithAttempt({})
    const failed = logs('warn').filter((line) => line.includes('HTTP 404'))
    expect(failed.map((line) => line.slice(0, line.indexOf(' failed: '))).sort()).toEqual([`OTLP export of metrics to ${metrics.url}/m`, `OTLP export of traces to ${traces.url}/t`])
  })

  it('names <base>/v1/traces and the override in the failure lines when only metrics has a variable of its own', async () => {
    const [base, override] = [await endpoint({ kind: 'status', status: 404 }), await endpoint({ kind: 'status', status: 404 })]
    vi.stubEnv(ENDPOINT_ENV, base.url)
    vi.stubEnv(METRICS_ENV, `${override.url}/m`)
    const { logs } = await exportRunWithAttempt({})
    const failed = logs('warn').filter((line) => line.includes('HTTP 404'))
    expect(failed.map((line) => line.slice(0, line.indexOf(' failed: '))).sort()).toEqual([`OTLP export of metrics to ${override.url}/m`, `OTLP export of traces to ${base.url}/v1/traces`])
  })

  it('blames only the stuck signal when dispose gives up on it: metrics a healthy endpoint took are not said to have failed', async () => {
    const [stuck, healthy] = [await endpoint({ kind: 'never' }), await endpoint()]
    vi.stubEnv(TRACES_ENV, `${stuck.url}/t`)
    vi.stubEnv(METRICS_ENV, `${healthy.url}/m`)
    const { logs } = await exportRun({ flushTimeoutMs: 300 }, true)
    expect(healthy.requests.map((request) => request.path)).toEqual(['/m'])
    expect(logs('warn')).toEqual([`OTLP export of traces to ${stuck.url}/t failed: it did not finish within flushTimeoutMs, and rein stopped waiting for it. Runs are not affected; further failures of this kind are not logged.`])
  })

  it('never shows the credentials or query of a per-signal URL, in the info line nor in a failure line, yet sends to the URL as given', async () => {
    const server = await endpoint({ kind: 'status', status: 404 })
    const port = new URL(server.url).port
    vi.stubEnv(TRACES_ENV, `http://user:PASS-SECRET@127.0.0.1:${port}/in/traces?api_key=QUERY-SECRET`)
    vi.stubEnv(METRICS_ENV, `http://127.0.0.1:${port}/in/metrics?api_key=QUERY-SECRET`)
    const { logs } = await exportRunWithAttempt({})
    expect(new Set(pathsOf(server))).toEqual(new Set(['/in/traces?api_key=QUERY-SECRET', '/in/metrics?api_key=QUERY-SECRET']))
    expect(logs('info')).toEqual([`exporting traces to ${server.url}/in/traces (from ${TRACES_ENV}) and metrics to ${server.url}/in/metrics (from ${METRICS_ENV})`])
    expect(logs('warn').length).toBeGreaterThan(0)
    const shown = logs().join('\n')
    for (const secret of ['PASS-SECRET', 'QUERY-SECRET', 'user:']) expect(shown).not.toContain(secret)
  })
})

describe('OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER', () => {
  it('warns about every run against Jaeger (metrics answered 404) unless OTEL_METRICS_EXPORTER=none, which sends no metrics at all', async () => {
    const jaeger = await tracesOnlyEndpoint()
    const noisy = await exportRunWithAttempt({ endpoint: jaeger.url })
    expect(noisy.logs('warn')).toEqual([expect.stringContaining('OTLP export of metrics to') as string])
    jaeger.paths.length = 0
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    const quiet = await exportRunWithAttempt({ endpoint: jaeger.url })
    expect(jaeger.paths).toEqual(['/v1/traces'])
    expect(quiet.logs('warn')).toEqual([])
    expect(quiet.logs('info')).toEqual([`exporting traces to ${jaeger.url} (from Config endpoint); metrics are off (OTEL_METRICS_EXPORTER=none)`])
  })

  it('says how to stop the warning when the endpoint answers metrics 404 and takes traces (Jaeger): OTEL_METRICS_EXPORTER=none', async () => {
    const jaeger = await tracesOnlyEndpoint()
    const { logs } = await exportRunWithAttempt({ endpoint: jaeger.url })
    expect(logs('warn')).toEqual([expect.stringContaining('if it takes traces only (as Jaeger does), set OTEL_METRICS_EXPORTER=none') as string])
  })

  it('sends only metrics with OTEL_TRACES_EXPORTER=none, read case-insensitively and trimmed as the SDK spec says', async () => {
    const server = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, server.url)
    vi.stubEnv('OTEL_TRACES_EXPORTER', ' None ')
    const { logs } = await exportRunWithAttempt({})
    expect(server.traces()).toEqual([])
    expect(decodeHistograms(server.metrics()).map((point) => point.metric).sort()).toEqual(['gen_ai.client.operation.duration', 'gen_ai.client.token.usage', 'gen_ai.client.token.usage'])
    expect(logs('info')).toEqual([`exporting metrics to ${server.url} (from ${ENDPOINT_ENV}); traces are off (OTEL_TRACES_EXPORTER=none)`])
  })

  it('says content is exported with captureContent and traces off: the metrics resource carries the command line, which holds the prompt', async () => {
    const server = await endpoint()
    vi.stubEnv(ENDPOINT_ENV, server.url)
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'none')
    const { logs } = await exportRunWithAttempt({ captureContent: true })
    expect(server.metrics().join('\n')).toContain('process.command_args')
    expect(logs('info')).toEqual([`exporting metrics to ${server.url} (from ${ENDPOINT_ENV}), with content (captureContent); traces are off (OTEL_TRACES_EXPORTER=none)`])
  })

  it('registers nothing, with one info line and no warning, when both are none: even a malformed endpoint variable is no matter then', async () => {
    vi.stubEnv(ENDPOINT_ENV, 'localhost:4318')
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'none')
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'NONE')
    const { logs, registered } = await exportRunWithAttempt({})
    expect(registered).toBe(0)
    expect(logs()).toEqual(['OpenTelemetry export is off: OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER are none'])
  })

  it('still refuses a bad Config with both none: the row is wrong whatever the environment says', async () => {
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'none')
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    const root = new Context()
    standInTelemetry(root)
    const error: unknown = await loadOtelHttp(root, { endpoint: 'ftp://collector:4318' }).then(() => undefined, (thrown: unknown) => thrown)
    expect(String(error)).toContain('endpoint')
  })

  it.each([
    ['console', 'OTEL_TRACES_EXPORTER=console: rein understands only otlp and none there'],
    ['otlp,zipkin', 'OTEL_TRACES_EXPORTER=zipkin: rein understands only otlp and none there'],
    // The SDKs read none beside another exporter as a mistake, and keep the default.
    ['none,otlp', 'OTEL_TRACES_EXPORTER=none,otlp: none turns traces off only alone'],
  ])('warns once, saying what was not understood in %s, and exports with otlp', async (value, said) => {
    const server = await endpoint()
    vi.stubEnv('OTEL_TRACES_EXPORTER', value)
    const { logs, registered } = await exportRunWithAttempt({ endpoint: server.url })
    expect(registered).toBe(1)
    expect(logs('warn')).toEqual([`${said}; read as otlp`])
    expect(decodeTraces(server.traces()).map((span) => span.name)).toContain('invoke_agent main')
    expect(server.metrics()).not.toEqual([])
  })

  it.each(['otlp', ' OTLP ', ''])('exports both signals without a word for %j (otlp is the default)', async (value) => {
    const server = await endpoint()
    vi.stubEnv('OTEL_TRACES_EXPORTER', value)
    vi.stubEnv('OTEL_METRICS_EXPORTER', value)
    const { logs } = await exportRunWithAttempt({ endpoint: server.url })
    expect(logs('warn')).toEqual([])
    expect([server.traces().length > 0, server.metrics().length > 0]).toEqual([true, true])
  })

  it('does not let a bad metrics header variable stop traces when metrics are off', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_HEADERS', 'x-api-key=HEADER-SECRET%0Ax-injected%3A%201')
    const { logs, registered } = await exportRunWithAttempt({ endpoint: server.url })
    expect(registered).toBe(1)
    expect(logs('warn')).toEqual([])
    expect(server.traces()).not.toEqual([])
  })
})

describe('Config', () => {
  it.each([
    [{ endpoint: 'ftp://collector:4318' }, 'endpoint'],
    [{ endpoint: 'http://x', flushTimeoutMs: 0 }, 'flushTimeoutMs'],
    [{ endpoint: 'http://x', headers: { authorization: 42 } }, 'headers["authorization"]'],
    // YAML reads an unquoted numeric key as a number: the error must not quote it.
    [{ endpoint: 'http://x', headers: { 'x-api-key': 730912648871120000 } }, 'headers["x-api-key"]'],
    [{ endpoint: 'http://x', captureContent: 'yes' }, 'captureContent'],
    [{ endpoint: 'http://x', resource: { 'deployment.environment.name': ['prod'] } }, 'resource.deployment.environment.name'],
    [{ endpoint: 'http://x', resource: { 'service.name': 'other' } }, 'resource["service.name"]'],
    [{ endpoint: 'http://x', headers: { 'x-api-key': 'HEADER-SECRET\r\nx-injected: 1' } }, 'headers["x-api-key"]'],
    [{ endpoint: 'http://x', headers: { 'x-api-key': 'HEADER-SECRET\n' } }, 'headers["x-api-key"]'],
    [{ endpoint: 'http://x', headers: { 'x api key': 'HEADER-SECRET' } }, 'headers["x api key"]'],
    // The OTEL_EXPORTER_OTLP_HEADERS spelling, or a list: the whole value is a credential too.
    [{ endpoint: 'http://x', headers: 'authorization=Bearer HEADER-SECRET' }, 'headers'],
    [{ endpoint: 'http://x', headers: ['authorization: Bearer HEADER-SECRET'] }, 'headers'],
  ])('fails at load naming the field: %j', async (config, field) => {
    const root = new Context()
    standInTelemetry(root)
    const error: unknown = await loadOtelHttp(root, config as ConfigInput).then(() => undefined, (thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(Error)
    expect(String(error)).toContain(field)
    // A header's value is a credential: an error names the header, never what it holds.
    const shown = JSON.stringify({ message: String(error), details: (error as { details?: unknown }).details })
    expect([shown.includes('HEADER-SECRET'), shown.includes('7309126488')]).toEqual([false, false])
  })

  it('names the resource service.name (rein unless serviceName says otherwise) and adds the Config attributes', async () => {
    const server = await endpoint()
    await exportRun({ endpoint: server.url })
    await exportRun({ endpoint: server.url, serviceName: 'nightly-agent', resource: { 'deployment.environment.name': 'ci', 'team.size': 3 } })
    const [plain, named] = decodeTraces(server.traces())
    expect(plain!.resource['service.name']).toBe('rein')
    expect(named!.resource).toMatchObject({ 'service.name': 'nightly-agent', 'deployment.environment.name': 'ci', 'team.size': 3, 'telemetry.sdk.language': 'nodejs' })
  })

  it('leaves the process out of the resource (its command line holds the prompt) unless captureContent', async () => {
    const server = await endpoint()
    await exportRun({ endpoint: server.url })
    await exportRun({ endpoint: server.url, captureContent: true })
    const [plain, withContent] = decodeTraces(server.traces())
    expect(Object.keys(plain!.resource).filter((key) => key.startsWith('process.'))).toEqual([])
    expect(withContent!.resource).toHaveProperty(['process.command_args'])
  })

  it('masks a key on the command line (rein run "use sk-…") in the resource with captureContent', async () => {
    const key = 'sk-ARGV-KEY-MARKER-0123456789abcdef'
    const server = await endpoint()
    process.argv.push(`use ${key}`)
    try {
      await exportRun({ endpoint: server.url, captureContent: true })
    } finally {
      process.argv.pop()
    }
    const [span] = decodeTraces(server.traces())
    expect(span!.resource['process.command_args']).toContain('use ***')
    expect(server.requests.map((request) => request.body).join('\n')).not.toContain(key)
  })
})

describe('OTEL_EXPORTER_OTLP_PROTOCOL', () => {
  it.each([
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', ' GRPC '],
  ])('warns at load that gRPC is not spoken when %s=%j asks for it, and still exports over HTTP', async (variable, value) => {
    const server = await endpoint()
    vi.stubEnv(variable, value)
    const { logs, registered } = await exportRunWithAttempt({ endpoint: server.url })
    expect(registered).toBe(1)
    expect(logs('warn')).toEqual([`${variable}=grpc: rein sends OTLP over HTTP with JSON only; give the collector's OTLP/HTTP endpoint (port 4318 by default), not its gRPC one (4317)`])
    expect(server.traces()).not.toEqual([])
  })

  it.each(['http/json', 'http/protobuf', ''])('says nothing for %j: an OTLP/HTTP receiver takes the JSON rein sends', async (value) => {
    const server = await endpoint()
    vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', value)
    const { logs } = await exportRunWithAttempt({ endpoint: server.url })
    expect(logs('warn')).toEqual([])
  })

  it('says nothing of the protocol variable of a signal that is off', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', 'grpc')
    const { logs } = await exportRunWithAttempt({ endpoint: server.url })
    expect(logs('warn')).toEqual([])
  })
})

describe('header variables the exporter reads otherwise than written', () => {
  it.each([
    ['authorization=Bearer HEADER-SECRET%ZZ', 'OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not sent: its name or value holds a % that starts no percent-escape (write % as %25)'],
    ['authorization=Bearer HEADER-SECRET,x-tenant', 'OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not name=value, so it is not sent (a comma in a value is written %2C)'],
    ['x-api-key=', 'OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not sent: its value is empty'],
    // A bare token pasted in, its base64 padding read as `name=`: the "name" is the secret.
    ['SECRETc2VjcmV0LXRva2VuLXZhbHVlMTIzNDU2Nzg5MA=', 'OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not sent: its value is empty'],
    ['authorization=Bearer HEADER;SECRET', 'OTEL_EXPORTER_OTLP_HEADERS: header "authorization" is sent cut at its first ";" (write ; as %3B)'],
  ])('warns at load, naming only the place of an entry it drops (its "name" may be a pasted secret) and never a value, when %j would silently lose a header', async (value, said) => {
    const server = await endpoint()
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', value)
    const { logs, registered } = await exportRunWithAttempt({ endpoint: server.url })
    expect(registered).toBe(1)
    expect(logs('warn')).toEqual([said])
    expect(logs().join('\n')).not.toContain('SECRET')
    expect(server.traces()).not.toEqual([])
  })

  it('says nothing of a header Config sets, of an empty entry, nor of well-formed percent-escapes', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', 'authorization=bad%ZZ, ,x-tenant=a%3Bb%2Cc,')
    const { logs } = await exportRunWithAttempt({ endpoint: server.url, headers: { authorization: 'Bearer from-config' } })
    expect(logs('warn')).toEqual([])
    expect(server.requests[0]!.headers).toMatchObject({ authorization: 'Bearer from-config', 'x-tenant': 'a;b,c' })
  })

  it('reads the per-signal header variable of a signal that is on, not of one that is off', async () => {
    const server = await endpoint()
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_HEADERS', 'x-api-key=HEADER-SECRET%ZZ')
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'x-api-key=HEADER-SECRET%ZZ')
    const { logs } = await exportRunWithAttempt({ endpoint: server.url })
    expect(logs('warn')).toEqual(['OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1 is not sent: its name or value holds a % that starts no percent-escape (write % as %25)'])
  })
})
