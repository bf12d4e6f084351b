// The OTLP capture endpoint over real HTTP on loopback: what it records, and how each mode answers.
import { request } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { closedLoopbackUrl, startOtlpCapture, type OtlpCapture, type OtlpCaptureMode } from '../src/index.ts'

const captures: OtlpCapture[] = []
afterEach(async () => {
  await Promise.all(captures.splice(0).map((capture) => capture.close()))
})

async function capture(mode?: OtlpCaptureMode): Promise<OtlpCapture> {
  const started = await startOtlpCapture(mode)
  captures.push(started)
  return started
}

/** POSTs `body` to `url + path` on a connection of its own; resolves with the status and the body. */
function post(url: string, path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(`${url}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      response.on('error', reject)
    })
    sent.on('error', reject)
    sent.end(body)
  })
}

describe('startOtlpCapture', () => {
  it('records each export with its path and headers, a gzip body gunzipped', async () => {
    const server = await capture()
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    await post(server.url, '/v1/traces', gzipSync('{"resourceSpans":[]}'), { 'content-encoding': 'gzip', 'x-team': 'rein' })
    await post(server.url, '/v1/metrics', '{"resourceMetrics":[]}')
    expect(server.requests).toMatchObject([
      { path: '/v1/traces', body: '{"resourceSpans":[]}', headers: { 'content-encoding': 'gzip', 'x-team': 'rein' } },
      { path: '/v1/metrics', body: '{"resourceMetrics":[]}' },
    ])
    expect(server.traces()).toEqual(['{"resourceSpans":[]}'])
    expect(server.metrics()).toEqual(['{"resourceMetrics":[]}'])
  })

  it.each<[OtlpCaptureMode, { status: number; body: string }]>([
    [{ kind: 'ok' }, { status: 200, body: '{}' }],
    [{ kind: 'garbage-200' }, { status: 200, body: '<html>not otlp' }],
    [{ kind: 'status', status: 503 }, { status: 503, body: 'no' }],
  ])('answers %j as described', async (mode, answer) => {
    const server = await capture(mode)
    expect(await post(server.url, '/v1/traces', '{}')).toEqual(answer)
    expect(server.traces()).toEqual(['{}'])
  })

  it('answers not-http with bytes that are not HTTP, after recording the export', async () => {
    const server = await capture({ kind: 'not-http' })
    await expect(post(server.url, '/v1/traces', '{}')).rejects.toMatchObject({ code: expect.stringMatching(/^HPE_/) })
    expect(server.traces()).toEqual(['{}'])
  })

  it('never answers in never mode, and close() ends the hanging request', async () => {
    const server = await startOtlpCapture({ kind: 'never' })
    let settled = false
    const pending = post(server.url, '/v1/metrics', '{}').finally(() => { settled = true })
    await expect.poll(() => server.metrics()).toEqual(['{}'])
    expect(settled).toBe(false)
    await server.close()
    await expect(pending).rejects.toMatchObject({ code: 'ECONNRESET' })
  })
})

describe('closedLoopbackUrl', () => {
  it('names a port on 127.0.0.1 where nothing listens', async () => {
    const url = await closedLoopbackUrl()
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    await expect(post(url, '/v1/traces', '{}')).rejects.toMatchObject({ code: 'ECONNREFUSED' })
  })
})
