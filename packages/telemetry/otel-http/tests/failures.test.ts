// A dead, slow, refusing or babbling endpoint: the run is unaffected, dispose returns, one log line per kind.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { closedLoopbackUrl, type OtlpCaptureMode } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { endpoint } from './harness.ts'
import { bootStack, call, scripted } from './stack.ts'

const SCRIPT = () => scripted({
  go: {
    0: { m: [[call('read', { path: 'a' }, 'call_a'), { usage: { inputTokens: 10, outputTokens: 2 } }]] },
    1: { m: [[{ text: 'done' }, { usage: { inputTokens: 20, outputTokens: 1 } }]] },
  },
})

/**
 * Runs one turn against `url`, then disposes the plugin; returns the turn's result and the plugin's
 * warnings. A small bound where the endpoint never settles things itself; elsewhere one roomy enough
 * that a loaded machine still sees the endpoint's own answer first.
 */
async function runAgainst(url: string, flushTimeoutMs = 2_000) {
  const { root, otel, create, logs } = await bootStack(SCRIPT(), { endpoint: url, flushTimeoutMs })
  const agent = await create()
  const result = await agent.send('go')
  // Also mid-run: ctx.telemetry.flush() waits on the sink's flush, which must resolve, not reject.
  await root.telemetry.flush()
  await otel.dispose()
  return { result, warnings: logs('warn') }
}

/** What a warning line says for each kind of failure. */
const SAYS = {
  refused: 'connection refused (ECONNREFUSED)',
  timeout: 'the endpoint did not answer in time',
  gaveUp: 'it did not finish within flushTimeoutMs',
  dropped: 'dropped the connections still open; what they carried was not sent',
  notHttp: 'the endpoint\'s answer is not HTTP',
  retryable: 'the endpoint answered HTTP 429, 502, 503 or 504 (busy or unavailable), and no retry got through in time',
}

function expectOneLinePerKind(warnings: readonly string[], allowed: readonly string[], required: readonly string[]) {
  const kinds = warnings.map((line) => allowed.find((says) => line.includes(says)))
  expect(kinds).not.toContain(undefined)
  expect(new Set(kinds).size).toBe(kinds.length)
  for (const says of required) expect(kinds).toContain(says)
  for (const line of warnings) expect(line).toMatch(/^OTLP export of (traces|metrics|traces and metrics) to http:\/\/127\.0\.0\.1:\d+ failed: .*further failures of this kind are not logged\.$/)
}

describe('when the endpoint fails', () => {
  it('completes the run and logs one line when nothing listens', async () => {
    const { result, warnings } = await runAgainst(await closedLoopbackUrl(), 300)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expectOneLinePerKind(warnings, [SAYS.refused, SAYS.gaveUp], [SAYS.refused])
  })

  it('names traces and metrics in the one line when both are refused', async () => {
    const { warnings } = await runAgainst(await closedLoopbackUrl())
    expect(warnings.filter((line) => line.includes(SAYS.refused))).toEqual([expect.stringMatching(/^OTLP export of traces and metrics to /)])
  })

  it('completes the run, and dispose returns, when the endpoint never answers', async () => {
    const server = await endpoint({ kind: 'never' })
    const { result, warnings } = await runAgainst(server.url, 300)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expect(server.requests.length).toBeGreaterThan(0)
    // Which of the two comes first (the export's own timeout, or dispose's bound) is the machine's business.
    // A flush that gave up dropped what was open, and says so: it may have carried exports the flush did not start.
    expectOneLinePerKind(warnings, [SAYS.timeout, SAYS.gaveUp, SAYS.dropped], [])
    expect(warnings.length).toBeGreaterThan(0)
  })

  it('completes the run, dispose returns and the connection is closed when the endpoint answers one byte at a time, forever', async () => {
    const server = await endpoint({ kind: 'trickle', everyMs: 50 })
    const { result } = await runAgainst(server.url, 300)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expect(server.requests.length).toBeGreaterThan(0)
    // A request left open would keep a process alive after `rein run` printed its answer.
    await vi.waitFor(() => expect(server.openConnections()).toBe(0), { timeout: 4_000 })
  })

  it('closes the connections a flush gave up on, before dispose: a trickling endpoint keeps no process alive', async () => {
    const server = await endpoint({ kind: 'trickle', everyMs: 50 })
    const { root, otel, create, logs } = await bootStack(SCRIPT(), { endpoint: server.url, flushTimeoutMs: 300 })
    const agent = await create()
    await agent.send('go')
    await root.telemetry.flush()
    expect(server.requests.length).toBeGreaterThan(0)
    // The README: past flushTimeoutMs, a flush drops every export connection still open, and says what that lost.
    await vi.waitFor(() => expect(server.openConnections()).toBe(0), { timeout: 4_000 })
    await vi.waitFor(() => expect(logs('warn').filter((line) => line.includes(SAYS.dropped))).toHaveLength(1), { timeout: 4_000 })
    await otel.dispose()
  })

  it('opens no connection once dispose gave up, even for a flush under way or an export the SDK retries, and blames no endpoint for the connections rein dropped', async () => {
    const server = await endpoint({ kind: 'trickle', everyMs: 50 })
    const { root, otel, create, logs } = await bootStack(SCRIPT(), { endpoint: server.url, flushTimeoutMs: 300 })
    const agent = await create()
    await agent.send('go')
    await Promise.all([root.telemetry.flush(), otel.dispose()])
    await vi.waitFor(() => expect(server.openConnections()).toBe(0), { timeout: 4_000 })
    const after = server.requests.length
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(server.requests.length).toBe(after)
    expect(logs('warn').filter((line) => line.includes('ECONNRESET'))).toEqual([])
  })

  it.each<[string, OtlpCaptureMode, string]>([
    ['400', { kind: 'status', status: 400 }, 'the endpoint answered HTTP 400 (Bad Request)'],
    ['404', { kind: 'status', status: 404 }, 'the endpoint answered HTTP 404 (Not Found)'],
    ['500', { kind: 'status', status: 500 }, 'the endpoint answered HTTP 500 (Internal Server Error)'],
    ['503 (retried until the time is up)', { kind: 'status', status: 503 }, SAYS.retryable],
    ['an answer that is not HTTP', { kind: 'not-http' }, SAYS.notHttp],
  ])('completes the run and logs one line for %s', async (_label, mode, says) => {
    const server = await endpoint(mode)
    const { result, warnings } = await runAgainst(server.url)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expectOneLinePerKind(warnings, [says, SAYS.gaveUp], [says])
  })

  it('takes a 200 whose body is not an OTLP answer as delivered: nothing to warn about', async () => {
    const server = await endpoint({ kind: 'garbage-200' })
    const { result, warnings } = await runAgainst(server.url)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expect(server.traces().length).toBeGreaterThan(0)
    expect(warnings).toEqual([])
  })
})

describe('when TLS to the endpoint fails', () => {
  const servers: Server[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
  })

  /** An https endpoint on 127.0.0.1 whose certificate no one issued (a self-hosted collector's, say). */
  async function selfSignedEndpoint(): Promise<string> {
    const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url))
    const server = createServer({ key: fixture('self-signed.key.pem'), cert: fixture('self-signed.cert.pem') }, (request, response) => {
      request.resume()
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** The one failure line of a run against `url`, which completes all the same; never a bare network error. */
  async function failureLine(url: string): Promise<string> {
    const { result, warnings } = await runAgainst(url)
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    const failed = warnings.filter((line) => !line.includes(SAYS.gaveUp))
    expect(failed).toHaveLength(1)
    expect(failed[0]).not.toContain('network error')
    return failed[0] ?? ''
  }

  it('says the certificate is not trusted, and which variable trusts it, not a bare network error', async () => {
    const line = await failureLine(await selfSignedEndpoint())
    expect(line).toContain('untrusted self-signed TLS certificate (DEPTH_ZERO_SELF_SIGNED_CERT)')
    expect(line).toContain('OTEL_EXPORTER_OTLP_CERTIFICATE')
  })

  it('says TLS failed and suggests http://, not a bare network error, when https:// names a plain-HTTP endpoint', async () => {
    const server = await endpoint()
    const line = await failureLine(server.url.replace(/^http:/, 'https:'))
    expect(line).toContain('TLS handshake failed (EPROTO)')
    expect(line).toContain('http://')
  })
})
