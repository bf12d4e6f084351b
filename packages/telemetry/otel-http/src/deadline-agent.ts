/**
 * The HTTP agents the exporters send through, each connection destroyed once it has been open for
 * the bound. The SDK's own timeout is an idle timer: a collector that sends a byte now and then
 * holds a request open forever, keeping the process alive after `rein run` has answered and, in a
 * long-lived one, filling the exporter's 30 concurrent exports until nothing is sent at all.
 */

import type { Agent } from 'node:http'
import type { Duplex } from 'node:stream'

/** Agents made for the exporters, and how to drop every connection they still hold. */
export interface DeadlineAgents {
  /** For the exporters' `httpAgentOptions`: an agent for the URL's protocol. */
  readonly factory: (protocol: string) => Promise<Agent>
  /** Destroys every connection still open (dispose gave up waiting on them). */
  destroy(): void
}

/** Agents whose connections last at most `ms` each; one connection per export (no keep-alive to hold one open). */
export function deadlineAgents(ms: number): DeadlineAgents {
  const agents = new Set<Agent>()
  return {
    factory: async (protocol) => {
      // Imported when the first export goes, as the SDK does: never before an instrumentation could wrap them.
      const { Agent: Made } = protocol === 'https:' ? await import('node:https') : await import('node:http')
      const agent: Agent = new Made({ keepAlive: false })
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
