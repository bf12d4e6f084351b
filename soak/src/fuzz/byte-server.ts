/**
 * A loopback HTTP server that answers each request with bytes the fuzzer chose: any status, content
 * type and body, written piece by piece (a tick apart, so pieces reach the client as separate
 * reads), then a clean end, a destroyed socket, or silence. One server serves every case; the case
 * is named in the request body (`fuzz-case-<n>`), so cases can run concurrently.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Served } from './sse-streams.ts'

export interface ByteServer {
  /** Base URL, e.g. http://127.0.0.1:1234/v1 */
  readonly url: string
  /** Registers what case `n` is answered with; removed once served. */
  serve(n: number, served: Served): void
  close(): Promise<void>
}

const CASE = /fuzz-case-(\d+)/

export async function startByteServer(): Promise<ByteServer> {
  const cases = new Map<number, Served>()
  const sockets = new Set<Socket>()
  const server = createServer((request, response) => {
    void answer(request, response, cases)
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    serve: (n, served) => { cases.set(n, served) },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function answer(request: IncomingMessage, response: ServerResponse, cases: Map<number, Served>) {
  let body = ''
  for await (const part of request) body += String(part)
  const n = Number(CASE.exec(body)?.[1])
  const served = cases.get(n)
  cases.delete(n)
  if (!served) {
    response.writeHead(500, { 'content-type': 'text/plain' }).end(`no fuzz case in the request: ${body.slice(0, 200)}`)
    return
  }
  if (served.end === 'stall-headers') return // the client's idle limit ends it; close() destroys the socket
  response.writeHead(served.status, served.contentType === undefined ? {} : { 'content-type': served.contentType })
  response.flushHeaders()
  let gone = false
  response.on('close', () => { gone = true })
  const write = async (piece: Uint8Array) => {
    if (gone) return
    if (!response.write(piece)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          response.off('drain', done)
          response.off('close', done)
          resolve()
        }
        response.on('drain', done)
        response.on('close', done)
      })
    }
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
  for (const piece of served.chunks) await write(piece)
  if (served.giantLine !== undefined) {
    await write(Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"'))
    const block = Buffer.alloc(64 * 1024, 'z')
    for (let sent = 0; sent < served.giantLine && !gone; sent += block.length) await write(block)
  }
  if (gone) return
  if (served.end === 'end') response.end()
  else if (served.end === 'destroy') response.socket?.destroy()
  // 'stall': leave it open and silent
}
