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
  /** Destroys every connection still open (dispose gave up waiting on them). */
  destroy(): void
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
  return {
    factory: async (protocol) => {
      // Imported when the first export goes, as the SDK does: never before an instrumentation could wrap them.
      const { Agent: Made } = protocol === 'https:' ? await import('node:https') : await import('node:http')
      const agent: Agent = new Made({ keepAlive: false, ...tls })
      const open = agent.createConnection.bind(agent)
      agent.createConnection = (options, callback) => {
        const socket = open(options, callback)
        if (socket) destroyAfter(socket, ms)
        return socket
      }
      agents.add(agent)
      return agent
    },
    destroy() {
      for (const agent of agents) agent.destroy()
    },
  }
}

/** The `code` of the error a connection past its deadline fails its request with. */
export const DEADLINE_CODE = 'REIN_EXPORT_DEADLINE'

function destroyAfter(socket: Duplex, ms: number): void {
  const late = () => socket.destroy(Object.assign(new Error(`the endpoint did not finish answering within ${ms} ms`), { code: DEADLINE_CODE }))
  const timer = setTimeout(late, ms)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
}
