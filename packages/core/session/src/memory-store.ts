/** A `SessionStore` in memory, for tests and throwaway sessions. It keeps the same rules as a durable store. */

import { ReinError, toFrozenJson } from '@rein/base'
import type { SessionEvent, SessionHeader } from './events.ts'
import type { LoadedSession, SessionStore, SessionSummary } from './store.ts'
import { summarize } from './summary.ts'

interface Entry {
  header: SessionHeader
  events: SessionEvent[]
  claimed: boolean
}

/** A `SessionStore` that keeps sessions in memory, gone with the process: for tests and throwaway sessions. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, Entry>()

  async create(header: SessionHeader): Promise<void> {
    if (this.sessions.has(header.id)) throw new ReinError('SESSION_EXISTS', `session ${header.id} already exists`)
    this.sessions.set(header.id, { header: toFrozenJson(header) as SessionHeader, events: [], claimed: true })
  }

  async open(id: string): Promise<LoadedSession> {
    const entry = this.entry(id)
    if (entry.claimed) throw new ReinError('SESSION_LOCKED', `session ${id} is open elsewhere in this process`, { details: { pid: process.pid } })
    entry.claimed = true
    return { header: entry.header, events: [...entry.events] }
  }

  async append(id: string, events: readonly SessionEvent[]): Promise<void> {
    const entry = this.entry(id)
    // Every seq, before anything is kept: a batch that skips is refused whole, as a durable store refuses it.
    for (const [index, event] of events.entries()) {
      const expected = entry.events.length + index
      const got = event.seq
      if (got !== expected) throw new ReinError('SESSION_SEQ_MISMATCH', `session ${id}: expected seq ${expected}, got ${got}; events must continue the log without gaps`, { details: { expected, got } })
    }
    entry.events.push(...events.map((event) => toFrozenJson(event) as SessionEvent))
  }

  async flush(id: string): Promise<void> {
    this.entry(id)
  }

  async close(id: string): Promise<void> {
    this.entry(id).claimed = false
  }

  async load(id: string): Promise<LoadedSession> {
    const entry = this.entry(id)
    return { header: entry.header, events: [...entry.events] }
  }

  async list(): Promise<SessionSummary[]> {
    return [...this.sessions.values()].map((entry) => summarize(entry.header, entry.events, { running: entry.claimed }))
  }

  private entry(id: string): Entry {
    const entry = this.sessions.get(id)
    if (!entry) throw new ReinError('SESSION_NOT_FOUND', `no session ${id}`)
    return entry
  }
}
