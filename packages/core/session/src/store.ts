/** The persistence seam: what a session store (`@rein/session-jsonl`, the in-memory store) implements. */

import type { SessionEvent, SessionHeader } from './events.ts'

export interface SessionSummary {
  id: string
  createdAt: string
  cwd: string
  /** The first words of the first user message. */
  title?: string
  turns: number
  /** Time of the last event (ISO 8601), or `createdAt` for an empty session. */
  lastActivity: string
  parentSessionId?: string
}

export interface LoadedSession {
  header: SessionHeader
  events: SessionEvent[]
}

/**
 * Stores must:
 * - `create`: remember the header; nothing need be written until the first append, and no reader
 *   may ever see a half-created session;
 * - `append`: take events whose first `seq` is the next one (else `SESSION_SEQ_MISMATCH`); a failed
 *   append leaves the stored log as it was;
 * - `flush`: resolve only when every appended event is durable (the barrier before side effects);
 * - `load`: return every valid event; a torn last record is dropped, anything else malformed is
 *   `SESSION_CORRUPT` naming where; a newer format is `SESSION_FORMAT_UNSUPPORTED`;
 * - `open` for writing takes an exclusive claim (`SESSION_LOCKED` naming the holder), `close` drops it.
 * Errors are `ReinError`s; `load` of an unknown id is `SESSION_NOT_FOUND`.
 */
export interface SessionStore {
  create(header: SessionHeader): Promise<void>
  /** Claims a stored session for writing (appends); released by `close`. */
  open(id: string): Promise<LoadedSession>
  append(id: string, events: readonly SessionEvent[]): Promise<void>
  flush(id: string): Promise<void>
  /** Flushes and releases the claim. */
  close(id: string): Promise<void>
  /** Reads without claiming. */
  load(id: string): Promise<LoadedSession>
  list(): Promise<SessionSummary[]>
  /** Releases whatever is still claimed (files, locks); called when the store is unregistered. */
  dispose?(): Promise<void>
}
