/**
 * A local OTLP/HTTP endpoint that records every request body (gunzipped when it came compressed)
 * and answers 200. Copied in spirit from packages/telemetry/otel-http/tests/capture-server.ts.
 */

import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { gunzipSync } from 'node:zlib'

/** One export as it arrived. */
interface CapturedExport {
  readonly path: string
  readonly body: string
}

/** A running capture endpoint. */
export interface OtlpCapture {
  /** The base URL, `http://127.0.0.1:<port>`, for otel-http's `endpoint`. */
  readonly url: string
  readonly exports: readonly CapturedExport[]
  close(): Promise<void>
}

/** Starts a capture endpoint on a free port of 127.0.0.1; close it when the test ends. */
export async function startOtlpCapture(): Promise<OtlpCapture> {
  const exports: CapturedExport[] = []
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw
      exports.push({ path: request.url ?? '/', body: body.toString('utf8') })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

/** Spans in an OTLP/JSON traces body. */
export function countSpans(body: string): number {
  const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] }
  return (parsed.resourceSpans ?? []).reduce((sum, resource) => sum + (resource.scopeSpans ?? []).reduce((inner, scope) => inner + (scope.spans?.length ?? 0), 0), 0)
}

/** Data points in an OTLP/JSON metrics body. */
export function countDataPoints(body: string): number {
  interface Metric { histogram?: { dataPoints?: unknown[] }; sum?: { dataPoints?: unknown[] }; gauge?: { dataPoints?: unknown[] } }
  const parsed = JSON.parse(body) as { resourceMetrics?: { scopeMetrics?: { metrics?: Metric[] }[] }[] }
  let points = 0
  for (const resource of parsed.resourceMetrics ?? []) {
    for (const scope of resource.scopeMetrics ?? []) {
      for (const metric of scope.metrics ?? []) points += (metric.histogram ?? metric.sum ?? metric.gauge)?.dataPoints?.length ?? 0
    }
  }
  return points
}

/**
 * An OTLP/JSON body cut in two: its resources (what every span or metric of the batch shares) and
 * everything else, each as JSON text.
 */
export function splitResources(body: string): { resources: string; rest: string } {
  const parsed = JSON.parse(body) as { resourceSpans?: { resource?: unknown }[]; resourceMetrics?: { resource?: unknown }[] }
  const batches = [...(parsed.resourceSpans ?? []), ...(parsed.resourceMetrics ?? [])]
  const resources = batches.map((batch) => batch.resource)
  for (const batch of batches) delete batch.resource
  return { resources: JSON.stringify(resources), rest: JSON.stringify(parsed) }
}
