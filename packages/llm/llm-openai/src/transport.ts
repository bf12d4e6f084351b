/**
 * One POST over `node:http` / `node:https`, its body read a network read at a time. Not `fetch`:
 * on Node 20 a streamed request over fetch (undici, web streams) cost about 1 ms of CPU on
 * loopback against 0.2 ms over `node:http`, loading undici about 50 ms of a cold start, and its
 * pooled connections held the process about 100 ms at exit.
 */

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import type { Stop } from '@rein/base'

/** A response's header lookup (what `Headers` offers, case-insensitive names). */
export type HeaderLookup = Pick<Headers, 'get' | 'has'>

/** One read of a body: bytes, or its end. */
export type ChunkRead = { done: false; value: Uint8Array } | { done: true; value?: Uint8Array }

/** The body as reads: a web stream's reader fits, and so does a Node response. */
export interface ChunkReader {
  read(): Promise<ChunkRead>
  /** Stops reading and drops the connection; what was not read is never read. */
  cancel(reason?: unknown): Promise<void>
  /**
   * The stream said it is over (`[DONE]`, or the closing usage chunk after the finish): what is left of the body is read in the background and
   * dropped, so the connection is kept for the next request (cut off if the body goes on for more
   * than a few seconds). `cancel` does nothing after it.
   */
  release?(): void
}

/** What the adapter needs of an HTTP response. */
export interface WireResponse {
  status: number
  headers: HeaderLookup
  body: ChunkReader
}

/** How long a body may go on after its stream said it is over before the connection is cut (ms). */
const RELEASE_MS = 5_000

/**
 * Idle kept-alive connections are closed after 4 s: before the 5 s after which common servers
 * (Node's, uvicorn's) close theirs, so a request rarely goes out on a connection the server is
 * closing. When one does, it fails as `ECONNRESET`, which the runtime retries after its backoff.
 * A server's `Keep-Alive: timeout=` hint shortens the 4 s further (Node's agent reads it).
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 4_000 }
const HTTP: Transport = { request: httpRequest, agent: new HttpAgent(KEEP_ALIVE) }
let https: Promise<Transport> | undefined

/** How requests to one kind of server are sent and pooled. */
interface Transport {
  request: typeof httpRequest
  agent: HttpAgent
}

/** The agent pooling kept-alive connections to `url`'s kind of server; tests look into its pool. */
export async function agentFor(url: URL): Promise<HttpAgent> {
  return url.protocol === 'https:' ? (await (https ??= loadHttps())).agent : HTTP.agent
}

/**
 * POSTs `body` to `url` and resolves at the status line; calls `sent` once the whole body is handed
 * to the network (the server may bill the request from then; a refused connection never sends). Rejects with Node's connection error
 * (its `code`: ECONNREFUSED, ENOTFOUND, …) or, once `stop` is stopped, with its reason; the request
 * and its connection are torn down either way. Redirects are not followed.
 */
export async function post(url: URL, headers: OutgoingHttpHeaders, body: string, stop: Stop, sent?: () => void): Promise<WireResponse> {
  // https loads TLS at its first use; plain http costs no wait.
  const { request, agent } = url.protocol === 'https:' ? await (https ??= loadHttps()) : HTTP
  if (stop.stopped) throw stop.reason
  return await new Promise<WireResponse>((resolve, reject) => {
    // Object.assign: not a spread-first literal, slow on Node 20 (docs/architecture.md,
    // Conventions). Not setHeader afterwards: it throws once headers went out, which `expect`
    // makes them do inside request().
    const outgoing = request(url, { method: 'POST', agent, headers: Object.assign({}, headers, { 'content-length': Buffer.byteLength(body) }) })
    let response: IncomingMessage | undefined
    // Wired by hand, not with the `signal` option (which watches the request with end-of-stream,
    // about 70 µs more CPU per request on loopback). Once answered, the response is what a stop
    // destroys: a body already complete leaves its connection alone (it may be carrying another request).
    const detach = stop.onStop(() => (response ?? outgoing).destroy(stop.reason instanceof Error ? stop.reason : new Error('aborted')))
    outgoing.once('close', detach)
    outgoing.once('response', (message) => {
      response = message
      message.once('end', detach)
      resolve({ status: message.statusCode ?? 0, headers: headerLookup(message), body: new MessageReader(message) })
    })
    // `on`, not `once`: a request can fail twice (a reset after an abort), and an unheard error would crash the process.
    outgoing.on('error', reject)
    if (sent) outgoing.once('finish', sent)
    outgoing.end(body)
  })
}

async function loadHttps(): Promise<Transport> {
  const { request, Agent } = await import('node:https')
  return { request, agent: new Agent(KEEP_ALIVE) }
}

function headerLookup(message: IncomingMessage): HeaderLookup {
  const value = (name: string) => message.headers[name.toLowerCase()]
  return {
    get: (name) => {
      const found = value(name)
      return found === undefined ? null : Array.isArray(found) ? found.join(', ') : found
    },
    has: (name) => value(name) !== undefined,
  }
}

/** Reads a response in paused mode: each read takes everything buffered so far. */
class MessageReader implements ChunkReader {
  private wake: (() => void) | undefined
  private ended = false
  private releasing = false
  private failure: Error | undefined

  constructor(private readonly message: IncomingMessage) {
    const notify = () => {
      const wake = this.wake
      this.wake = undefined
      wake?.()
    }
    message.on('readable', notify)
    message.on('end', () => {
      this.ended = true
      notify()
    })
    message.on('error', (error) => {
      // Node words a connection lost mid-body "aborted", which reads as if the caller had aborted.
      this.failure ??= error.message === 'aborted' ? new Error('the connection closed before the body ended', { cause: error }) : error
      notify()
    })
    // A connection that closes before the body's end (no terminating chunk, too few bytes) is a
    // break; one that closes after the whole body arrived is an end, read or not.
    message.on('close', () => {
      if (message.complete) this.ended = true
      else if (!this.ended) this.failure ??= new Error('the connection closed before the body ended')
      notify()
    })
  }

  async read(): Promise<ChunkRead> {
    for (;;) {
      const chunk = this.message.read() as Buffer | null
      if (chunk !== null) return { done: false, value: chunk }
      if (this.failure) throw this.failure
      if (this.ended) return { done: true, value: undefined }
      await new Promise<void>((resolve) => {
        this.wake = resolve
      })
    }
  }

  async cancel(): Promise<void> {
    // A body read to its end, or being let run out, has nothing to drop; destroying it anyway
    // costs an error object, or the kept connection.
    if (!this.ended && !this.releasing) this.message.destroy()
  }

  release(): void {
    if (this.ended || this.releasing) return
    this.releasing = true
    void this.drain()
  }

  /**
   * Reads the rest of the body, dropped, for at most `RELEASE_MS`; then the connection is cut. The
   * answer is already out, so neither the wait nor the connection keeps the process alive.
   */
  private async drain(): Promise<void> {
    const cut = setTimeout(() => this.message.destroy(), RELEASE_MS).unref()
    this.message.socket?.unref()
    try {
      while (!(await this.read()).done) {
        // dropped: the stream already said it is over
      }
    } catch {
      // cut off, or broken: the connection is not kept, nothing else is lost
    } finally {
      clearTimeout(cut)
    }
  }
}
