// A collector's answer, and the endpoint's own URL, may hold a key: a collector answering
// `401 Bad key sk-live-…` or quoting the header it was sent, an endpoint with a key in its path. No
// warning nor info line shows one. Real HTTP on loopback.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { closedLoopbackUrl } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { bootStack, call, scripted } from './stack.ts'

const SCRIPT = () => scripted({
  go: {
    0: { m: [[call('read', { path: 'a' }, 'call_a'), { usage: { inputTokens: 10, outputTokens: 2 } }]] },
    1: { m: [[{ text: 'done' }, { usage: { inputTokens: 20, outputTokens: 1 } }]] },
  },
})

// The configured header's value: looks like a token, shaped like no known kind of key.
const HEADER_SECRET = 'Zq7plainHeaderSecret0123'
const BEARER_SECRET = 'Yx9plainBearerSecret4567'
const SK = 'sk-live-abcdefghijklmnopqrstuvwxyz012345'
const PLAIN = 'Zq7plainPathSecret0123'

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  vi.unstubAllEnvs()
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A collector that refuses every export, quoting in its reason phrase and body the headers it got and a key. */
async function echoingCollector(status: number): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    const echoed = `Bad key ${SK} team ${String(request.headers['x-honeycomb-team'])} auth ${String(request.headers.authorization)}`
    response.writeHead(status, echoed, { 'content-type': 'text/plain' })
    response.end(`rejected: ${echoed}`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** One turn exported to `endpoint` with `headers`, then dispose; every line the plugin logged. */
async function linesOf(config: { endpoint?: string; headers?: Record<string, string> }) {
  const { otel, create, logs } = await bootStack(SCRIPT(), { flushTimeoutMs: 2_000, ...config })
  const agent = await create()
  expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'done' })
  await otel.dispose()
  return logs
}

function expectNoSecret(lines: readonly string[]) {
  const text = lines.join('\n')
  for (const secret of [HEADER_SECRET, BEARER_SECRET, SK.slice(0, 16), PLAIN]) expect(text).not.toContain(secret)
}

describe('a collector that echoes a credential', () => {
  it.each([400, 401, 403])('never puts a key from its HTTP %i reason phrase or body into the warning, which still says what it answered', async (status) => {
    const url = await echoingCollector(status)
    const logs = await linesOf({ endpoint: url, headers: { 'x-honeycomb-team': HEADER_SECRET, authorization: `Bearer ${BEARER_SECRET}` } })
    const warnings = logs('warn')
    expect(warnings).toEqual([expect.stringContaining(`to ${url} failed: the endpoint answered HTTP ${status} (Bad key *** team *** auth `)])
    expectNoSecret(logs())
  })

  it('masks the header secrets read from OTEL_EXPORTER_OTLP_HEADERS too', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', `x-honeycomb-team=${HEADER_SECRET},authorization=Bearer%20${BEARER_SECRET}`)
    const url = await echoingCollector(401)
    const logs = await linesOf({ endpoint: url })
    expect(logs('warn')).toEqual([expect.stringContaining('the endpoint answered HTTP 401 (Bad key ***')])
    expectNoSecret(logs())
  })
})

describe('a key in the endpoint\'s path', () => {
  it.each([
    ['an sk- key as a segment', `/${SK}`, '/***'],
    ['a plain key after a key/ segment', `/key/${PLAIN}`, '/key/***'],
  ])('is masked in the info line and the failure line, which keep the host and the rest of the path (%s)', async (_case, path, shown) => {
    const origin = await closedLoopbackUrl()
    const logs = await linesOf({ endpoint: `${origin}${path}` })
    expect(logs('info')).toContain(`exporting traces and metrics to ${origin}${shown} (from Config endpoint)`)
    expect(logs('warn')).toContainEqual(expect.stringContaining(`OTLP export of traces and metrics to ${origin}${shown} failed: connection refused`))
    expectNoSecret(logs())
  })

  it('is masked in a per-signal URL\'s lines', async () => {
    const origin = await closedLoopbackUrl()
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', `${origin}/token/${PLAIN}/v1/traces`)
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    const logs = await linesOf({})
    expect(logs('warn')).toContainEqual(expect.stringContaining(`OTLP export of traces to ${origin}/token/***/v1/traces failed`))
    expectNoSecret(logs())
  })

  it('is masked in the warning that a base URL ends in /v1/traces', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', `http://collector.example/key/${PLAIN}/v1/traces`)
    const logs = await linesOf({})
    expect(logs('warn')).toContainEqual(expect.stringContaining('give http://collector.example/key/***'))
    expectNoSecret(logs())
  })

  it.each([
    ['a plain key after a key/ segment', (origin: string) => `${origin}/key/${PLAIN}`],
    ['a query value, named like a secret or not', (origin: string) => `${origin}/otlp?api_key=${PLAIN}&sig=${QUERY_SIG}`],
  ])('is masked when the collector quotes the request path in its reason phrase and body (%s)', async (_case, endpointAt) => {
    const origin = await pathEchoingCollector()
    const logs = await linesOf({ endpoint: endpointAt(origin) })
    expect(logs('warn')).toContainEqual(expect.stringContaining('failed: the endpoint answered HTTP 404 (no route '))
    expectNoSecret(logs())
    expect(logs().join('\n')).not.toContain(QUERY_SIG)
  })
})

// A SAS-style signature: no name says it is a secret, no shape does either.
const QUERY_SIG = 'Vb3plainSignature4567'

/** A collector answering 404 that quotes the path and query it was sent, as many routers do. */
async function pathEchoingCollector(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    response.writeHead(404, `no route ${request.url ?? ''}`, { 'content-type': 'text/plain' })
    response.end(`Cannot POST ${request.url ?? ''}`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
