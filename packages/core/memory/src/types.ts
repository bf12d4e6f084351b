/** The shapes `ctx.memory`, its stores and its callers share. */

import type { ReinError } from '@rein/base'

/** Whose memory: the person's (every project), or one project's. Anything bound to one session lives in its log. */
export type MemoryScope = 'user' | 'project'

/** What kind of thing is remembered. */
export type MemoryType = 'fact' | 'preference' | 'decision' | 'episode' | 'procedure'

/** Where an entry came from: the session (and message) that wrote it. */
export interface MemorySource {
  readonly sessionId: string
  readonly messageId?: string
}

/** What a writer gives; the service fills in id, times and checks the rest. Times are epoch milliseconds. */
export interface MemoryDraft {
  readonly scope: MemoryScope
  /** Set exactly when `scope` is `project`: the project's id (by default the workspace root's real path). */
  readonly projectId?: string
  readonly type: MemoryType
  readonly content: string
  readonly source: MemorySource
  /** 0..1, how sure the writer was. */
  readonly confidence?: number
  /** After this, the entry is never recalled (and a store may delete it). */
  readonly expiresAt?: number
  /** The entry this one corrects: that one is retired. */
  readonly supersedes?: string
}

/** One remembered thing, as stored: a draft with its id and times. */
export interface MemoryEntry extends MemoryDraft {
  readonly id: string
  readonly createdAt: number
  readonly updatedAt: number
  /** Set when a later entry superseded this one: kept, dated, never recalled. */
  readonly retiredAt?: number
  readonly retiredBy?: string
}

/** What may change in an entry. */
export interface MemoryPatch {
  readonly content?: string
  readonly type?: MemoryType
  readonly confidence?: number
  readonly expiresAt?: number | null
}

/** A recall: live (not retired, not expired) entries of these scopes, best first. */
export interface RecallQuery {
  readonly scopes: readonly MemoryScope[]
  /** Required when `scopes` holds `project`: only that project's entries. */
  readonly projectId?: string
  /** Text to rank by (full-text); without it, the order is type (in the order `MemoryType` lists them), then newest first, then id. */
  readonly query?: string
  readonly types?: readonly MemoryType[]
  readonly limit: number
  /** Now, for expiry (epoch ms); default `Date.now()`. */
  readonly now?: number
}

/** What `write` did: added a new entry, or refreshed a live one with the same normalized content. */
export interface WriteResult {
  readonly entry: MemoryEntry
  readonly outcome: 'added' | 'refreshed'
}

/**
 * Where entries live. The service validates before calling; a store only stores and finds.
 * Every method rejects with a `ReinError` naming the store's file on failure.
 */
export interface MemoryStore {
  /**
   * Set when the store cannot be used at all (its file could not be opened: locked, damaged, too
   * new): the reason, naming the file. The service keeps such a store registered, so `list` and
   * the like report the reason, but gives runs no memory tools and no prompt block. It may become
   * set by a call that fails (a file opened only at the first call): the service reads it again
   * after every failed call, and turns memory off then as it does at registration.
   */
  readonly unavailable?: ReinError
  /** Adds `entry` as given (id and times set by the service). */
  insert(entry: MemoryEntry): Promise<void>
  /** Replaces the entry with this id; `MEMORY_NOT_FOUND` when there is none. */
  replace(entry: MemoryEntry): Promise<void>
  /** The entry, retired or not, or `undefined`. */
  get(id: string): Promise<MemoryEntry | undefined>
  /**
   * A live entry of this scope (and project) and type whose normalized content (see
   * `normalizeContent`) equals `normalized`, if any: a write refreshes it instead of adding a duplicate.
   */
  findSame(scope: MemoryScope, projectId: string | undefined, type: MemoryType, normalized: string, now: number): Promise<MemoryEntry | undefined>
  /** Live entries matching the query, best first, at most `limit`. */
  recall(query: RecallQuery & { readonly now: number }): Promise<readonly MemoryEntry[]>
  /** Removes the entry; `false` when there was none. */
  delete(id: string): Promise<boolean>
  /** Every entry (retired and expired included), for export and listing, in `createdAt` order. */
  all(): Promise<readonly MemoryEntry[]>
  /**
   * Runs `body` as one unit other processes cannot interleave with: its writes land together or
   * not at all (a throw undoes them and is rethrown). The service runs every `write`, `update` and
   * `forget` in it, never two bodies at once in one process, and calls only this store's methods
   * inside. Without it, a store is atomic only within one process.
   */
  atomically?<T>(body: () => Promise<T>): Promise<T>
  /** Releases the store's files; called when it is unregistered. */
  close?(): Promise<void>
}
