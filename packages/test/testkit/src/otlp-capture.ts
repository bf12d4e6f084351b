/**
 * A real OTLP/HTTP endpoint on 127.0.0.1 that records every POST body, and the ways one goes wrong:
 * an HTTP error status, an answer that never comes or never ends, an answer that is not HTTP, or
 * nothing listening.
 */

import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { gunzipSync } from 'node:zlib'

/** How the endpoint answers each export. */
export type OtlpCaptureMode =
  /** 200 with `{}`, the answer of a collector that took everything. */
  | { kind: 'ok' }
  /** 200 with a body that is not an OTLP response at all. */
  | { kind: 'garbage-200' }
  /** That status, with a short text body. */
  | { kind: 'status'; status: number }
  /** Reads the request, then never answers. */
  | { kind: 'never' }
  /** Writes bytes that are not HTTP, then closes. */
  | { kind: 'not-http' }
  /** Answers 200, then sends one byte of body every `everyMs` and never ends it (a collector that is alive but stuck). */
  | { kind: 'trickle'; everyMs: number }

/** One export as the endpoint received it. */
export interface CapturedExport {
  path: string
  headers: Readonly<Record<string, string>>
  /** The body, gunzipped when it came compressed. */
  body: string
}

/** A running capture endpoint; close it when the test ends. */
export interface OtlpCapture {
  /** The base URL, `http://127.0.0.1:<port>` (what otel-http's `endpoint` takes). */
  readonly url: string
  /** Every request, in the order they ended. */
  readonly requests: readonly CapturedExport[]
  /** Bodies sent to `/v1/traces`. */
  traces(): string[]
  /** Bodies sent to `/v1/metrics`. */
  metrics(): string[]
  /** How many client connections are open now: a client that gave up on an answer closes its own. */
  openConnections(): number
  /** Destroys open connections (a request left hanging included) and stops listening. */
  close(): Promise<void>
}

/** Starts a capture endpoint on a free port of 127.0.0.1 that answers as `mode` says (default `ok`). */
export async function startOtlpCapture(mode: OtlpCaptureMode = { kind: 'ok' }): Promise<OtlpCapture> {
  const requests: CapturedExport[] = []
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const gzipped = request.headers['content-encoding'] === 'gzip'
      requests.push({
        path: request.url ?? '/',
        headers: Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : value ?? ''])),
        body: (gzipped ? gunzipSync(raw) : raw).toString('utf8'),
      })
      switch (mode.kind) {
        case 'ok':
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
          return
        case 'garbage-200':
          response.writeHead(200, { 'content-type': 'application/json' }).end('<html>not otlp')
          return
        case 'status':
          response.writeHead(mode.status, { 'content-type': 'text/plain' }).end('no')
          return
        case 'never':
          return
        case 'not-http':
          request.socket.end('SPLAT nonsense\r\n\r\n')
          return
        case 'trickle': {
          response.writeHead(200, { 'content-type': 'application/json' })
          const timer = setInterval(() => response.write(' '), mode.everyMs)
          response.on('close', () => clearInterval(timer))
          return
        }
      }
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await listen(server)
  const { port } = server.address() as AddressInfo
  const bodies = (path: string) => requests.filter((request) => request.path === path).map((request) => request.body)
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    traces: () => bodies('/v1/traces'),
    metrics: () => bodies('/v1/metrics'),
    openConnections: () => sockets.size,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

/** A base URL on 127.0.0.1 where nothing listens: a port that was free a moment ago. */
export async function closedLoopbackUrl(): Promise<string> {
  const server = createServer()
  await listen(server)
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
}
