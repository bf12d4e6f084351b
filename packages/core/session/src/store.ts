/** The persistence seam: what a session store (`@rein/session-jsonl`, the in-memory store) implements. */

import type { TokenUsage } from '@rein/llm'
import type { SessionEvent, SessionHeader, TurnEndReason } from './events.ts'

/**
 * Where a session stands: how its last turn ended, `needs-repair` when the log ends mid-turn and no
 * process holds it, `running` when a live process holds it, `empty` before its first turn.
 */
export type SessionStatus = TurnEndReason | 'needs-repair' | 'running' | 'empty'

/** One stored session as `list()` reports it, built by `summarize`: who, where, how far, what it spent. */
export interface SessionSummary {
  id: string
  createdAt: string
  cwd: string
  /** The first words of the first user message. */
  title?: string
  turns: number
  status: SessionStatus
  /** The model of the last request. */
  model?: string
  /** Over every attempt the log records, failed ones included. */
  usage: TokenUsage
  /** Money over the same; absent when any model used was unpriced. */
  cost?: number
  /** Part of `usage` is estimated: a provider reported none for an attempt that produced output. */
  usageEstimated?: true
  /** Time of the last event (ISO 8601), or `createdAt` for an empty session. */
  lastActivity: string
  /**
   * Event types in the log that are no core type and were not written `ignorable`, sorted: opening
   * or showing it needs the plugins that define them (`SESSION_UNKNOWN_EVENT` otherwise). Absent
   * when there are none.
   */
  requires?: string[]
  /** 0 for a top-level session. */
  depth: number
  /** A child session's: the session, run and tool call that started it (see `SessionHeader`). */
  parentSessionId?: string
  parentRunId?: string
  parentCallId?: string
}

/** A stored session as `open` and `load` return it: its header and every valid event. */
export interface LoadedSession {
  header: SessionHeader
  events: SessionEvent[]
  /**
   * `open` only: bytes of an unfinished last line the store cut to append after it (a write a killed
   * process did not finish, never reported saved); absent when there was none.
   */
  tornBytes?: number
}

/** How `list` reports the sessions it leaves out. */
export interface ListOptions {
  /** Called for each stored session that could not be read (a damaged or foreign file), with why. */
  unreadable?: (id: string, error: unknown) => void
  /**
   * `ctx.sessions.list` only: also the sessions `open` and `load` refuse for an event type no loaded
   * plugin defines, for a caller that loads what it finds and says what is wrong with it (a parent
   * looking for its child must not take a child it cannot read for one that never ran).
   */
  all?: boolean
}

/** What `SessionStore.open` takes besides the id. */
export interface OpenOptions {
  /** Refuses a log it must not be written to (throws); called before the store changes any byte. */
  check?(loaded: LoadedSession): void
}

/**
 * Where sessions are kept: what a store plugin implements and registers with
 * `ctx.sessions.registerStore`. Stores must:
 * - `create`: remember the header; nothing need be written until the first append, and no reader
 *   may ever see a half-created session;
 * - `append`: take events whose first `seq` is the next one (else `SESSION_SEQ_MISMATCH`); a failed
 *   append leaves the stored log as it was;
 * - `flush`: resolve only when every appended event is durable (the barrier before side effects);
 * - `write`, optional: resolve once every appended event is where a killed process cannot lose it
 *   (written to the file), without waiting for the disk; the next `flush` makes it durable. A failed
 *   write is reported like a failed flush;
 * - `load`: return every valid event; a torn last record is dropped, anything else malformed is
 *   `SESSION_CORRUPT` naming where; a newer format is `SESSION_FORMAT_UNSUPPORTED`;
 * - `open` for writing takes an exclusive claim (`SESSION_LOCKED` naming the holder), `close` drops it;
 * - `folder`, when the store keeps files with its logs: an absolute path, made 0700 if missing, that
 *   no id can lead outside the store, and that no listing or loading mistakes for a session.
 * Errors are `ReinError`s; `load` of an unknown id is `SESSION_NOT_FOUND`.
 */
export interface SessionStore {
  create(header: SessionHeader): Promise<void>
  /**
   * Claims a stored session for writing (appends); released by `close`. `options.check` is called
   * with what was read before the store changes any byte of it (cutting a torn last line): a throw
   * leaves the log as it was, releases the claim, and is what `open` rejects with.
   */
  open(id: string, options?: OpenOptions): Promise<LoadedSession>
  append(id: string, events: readonly SessionEvent[]): Promise<void>
  flush(id: string): Promise<void>
  /** Writes what was appended, kept across a killed process but not yet durable; without it, the session flushes. */
  write?(id: string): Promise<void>
  /** Flushes and releases the claim. */
  close(id: string): Promise<void>
  /** Reads without claiming. */
  load(id: string): Promise<LoadedSession>
  /** Every stored session; one that cannot be read is left out and, when given, told to `unreadable`. */
  list(options?: ListOptions): Promise<SessionSummary[]>
  /**
   * The folder for files that go with session `id` (spills, checkpoints): absolute, 0700, made on
   * the first call, kept with the log. A store without it gets a temporary folder from the service.
   */
  folder?(id: string): Promise<string>
  /** Where `folder(id)` keeps the folder, without making it (nothing is touched on disk). */
  folderPath?(id: string): string
  /** Releases whatever is still claimed (files, locks); called when the store is unregistered. */
  dispose?(): Promise<void>
}
