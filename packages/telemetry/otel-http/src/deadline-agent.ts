/**
 * The HTTP agents the exporters send through, each connection destroyed once it has been open for
 * the bound. The SDK's own timeout is an idle timer: a collector that sends a byte now and then
 * holds a request open forever, keeping the process alive after `rein run` has answered and, in a
 * long-lived one, filling the exporter's 30 concurrent exports until nothing is sent at all.
 */

import { readFileSync } from 'node:fs'
import type { Agent } from 'node:http'
import { resolve } from 'node:path'
import type { Duplex } from 'node:stream'

/** Agents made for the exporters, and how to drop every connection they still hold. */
export interface DeadlineAgents {
  /** For the exporters' `httpAgentOptions`: an agent for the URL's protocol. */
  readonly factory: (protocol: string) => Promise<Agent>
  /** Destroys every connection still open (a flush gave up waiting); their exports fail `FLUSH_DROPPED_CODE`, later ones open their own. */
  drop(): void
  /** Drops every connection and refuses every later one (dispose gave up): no retry keeps the process alive. */
  close(): void
}

/** The TLS files the OTLP environment variables name for a signal: what the SDK's own agent would use. */
export interface TlsFiles {
  ca?: Buffer
  cert?: Buffer
  key?: Buffer
}

/**
 * `OTEL_EXPORTER_OTLP_<SIGNAL>_CERTIFICATE` (else `OTEL_EXPORTER_OTLP_CERTIFICATE`), `…_CLIENT_CERTIFICATE`
 * and `…_CLIENT_KEY`, read as the SDK reads them (relative to the working folder; one that cannot be
 * read is left out, as the SDK leaves it): a collector behind a private CA or asking for mTLS.
 */
export function tlsFromEnvironment(signal: 'TRACES' | 'METRICS', env: NodeJS.ProcessEnv): TlsFiles {
  const read = (suffix: string): Buffer | undefined => {
    const path = (env[`OTEL_EXPORTER_OTLP_${signal}_${suffix}`] ?? env[`OTEL_EXPORTER_OTLP_${suffix}`])?.trim()
    if (!path) return undefined
    try {
      return readFileSync(resolve(process.cwd(), path))
    } catch {
      return undefined
    }
  }
  const [ca, cert, key] = [read('CERTIFICATE'), read('CLIENT_CERTIFICATE'), read('CLIENT_KEY')]
  return { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) }
}

/** Agents whose connections last at most `ms` each; one connection per export (no keep-alive to hold one open). */
export function deadlineAgents(ms: number, tls: TlsFiles = {}): DeadlineAgents {
  const agents = new Set<Agent>()
  let closed = false
  const drop = (by: 'flush' | 'dispose') => {
    for (const agent of agents) for (const socket of socketsOf(agent)) socket.destroy(gaveUp(by))
  }
  return {
    factory: async (protocol) => {
      // Imported when the first export goes, as the SDK does: never before an instrumentation could wrap them.
      const { Agent: Made } = protocol === 'https:' ? await import('node:https') : await import('node:http')
      const agent: Agent = new Made({ keepAlive: false, ...tls })
      const open = agent.createConnection.bind(agent)
      agent.createConnection = (options, callback) => {
        const socket = open(options, callback)
        if (socket && closed) socket.destroy(gaveUp('dispose'))
        else if (socket) destroyAfter(socket, ms)
        return socket
      }
      agents.add(agent)
      return agent
    },
    drop: () => drop('flush'),
    close() {
      closed = true
      drop('dispose')
    },
  }
}

/** The `code` of the error a connection dispose dropped fails its request with: dispose said it gave up, so it is not reported again. */
export const GAVE_UP_CODE = 'REIN_EXPORT_GAVE_UP'
/** The `code` for one a flush dropped: it may carry an export the flush did not start, lost, so it is reported. */
export const FLUSH_DROPPED_CODE = 'REIN_EXPORT_DROPPED'

function gaveUp(by: 'flush' | 'dispose'): Error {
  return by === 'dispose'
    ? Object.assign(new Error('rein stopped waiting for the export (flushTimeoutMs)'), { code: GAVE_UP_CODE })
    : Object.assign(new Error('a flush stopped waiting (flushTimeoutMs) and dropped the connection'), { code: FLUSH_DROPPED_CODE })
}

/** Every connection `agent` holds, in use or idle. */
function socketsOf(agent: Agent): Duplex[] {
  return [...Object.values(agent.sockets), ...Object.values(agent.freeSockets)].flatMap((list) => list ?? [])
}

/** The `code` of the error a connection past its deadline fails its request with. */
export const DEADLINE_CODE = 'REIN_EXPORT_DEADLINE'

function destroyAfter(socket: Duplex, ms: number): void {
  const late = () => socket.destroy(Object.assign(new Error(`the endpoint did not finish answering within ${ms} ms`), { code: DEADLINE_CODE }))
  const timer = setTimeout(late, ms)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
}
