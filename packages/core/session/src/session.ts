/**
 * `Session`: one open log. Appends are in memory until `flush()`, the durability barrier the agent
 * calls before every side effect; a failed flush keeps the unflushed events for the next try.
 * `write()` is the lighter barrier before a side effect that may safely happen twice: the events
 * reach the store, so a killed process keeps them, without waiting for the disk.
 */

import { ReinError, freezeJson, isReinError, toFrozenJson, type JsonValue } from '@rein/base'
import type { Message } from '@rein/llm'
import { MessageProjection } from './derive.ts'
import type { CoreEventData, CoreEventType, SessionEvent, SessionHeader } from './events.ts'
import type { SessionStore } from './store.ts'
import { coreEventProblem } from './event-shape.ts'

export interface SessionHooks {
  /** Called synchronously after each append, before it is durable. */
  appended(session: Session, event: SessionEvent): void
  /** Called after a flush made these events durable. */
  flushed(session: Session, events: readonly SessionEvent[]): void
  /** Whether an event type may be appended. */
  isKnown(type: string): boolean
  /** Whether events of `type` are always written `ignorable` (its definition says so). */
  isIgnorable?(type: string): boolean
  /** A folder for session `id` when its store keeps none. */
  tempFolder?(id: string): Promise<string>
  /** Where `tempFolder(id)` is, made or not. */
  tempFolderPath?(id: string): string
  /**
   * Called as the session closes, after the `beforeClose` hooks and before the last flush: it is
   * still open (appends, `folder()`). Must settle in bounded time and not reject.
   */
  closing?(session: Session): Promise<void>
  /** Called once the session is closed and its claim released. */
  closed?(session: Session): void
}

/** The last millisecond's ISO time: a turn appends several events within one, and formatting a Date costs. */
let lastTime = { ms: Number.NaN, iso: '' }

function isoNow(): string {
  const ms = Date.now()
  if (ms !== lastTime.ms) lastTime = { ms, iso: new Date(ms).toISOString() }
  return lastTime.iso
}

/** One session's log, open in this process: append events, flush them, derive the next request's messages, close. */
export class Session {
  private readonly _events: SessionEvent[]
  private _durable: number
  /** Events the store holds (`_durable` of them on disk); the rest are only here. */
  private _written: number
  private _flushing: Promise<void> = Promise.resolve()
  private _closed = false
  private _closing: Promise<void> | undefined
  private readonly _beforeClose = new Set<() => void | Promise<void>>()
  private readonly _projection = new MessageProjection()
  private _folder: Promise<string> | undefined
  private _folderPath: string | undefined

  constructor(readonly header: SessionHeader, events: readonly SessionEvent[], private readonly store: SessionStore, private readonly hooks: SessionHooks) {
    // A literal for a new session: V8 learns from its first push to make the next ones arrays of
    // objects, where a copy of an empty array starts as one of small integers and deoptimizes `append`.
    this._events = events.length > 0 ? [...events] : []
    this._durable = events.length
    this._written = events.length
    for (const event of events) this._projection.push(event)
  }

  get id(): string {
    return this.header.id
  }

  /** Every event, durable or not. */
  get events(): readonly SessionEvent[] {
    return this._events
  }

  /**
   * True once `close()` has made its final flush (or that flush failed), just before the store's claim
   * is released; from then on appends fail with `SESSION_CLOSED`. While the `beforeClose` hooks and
   * `session/close` listeners run it is still false.
   */
  get closed(): boolean {
    return this._closed
  }

  /** Events appended but not yet flushed. */
  get pending(): number {
    return this._events.length - this._durable
  }

  append<T extends CoreEventType>(type: T, data: CoreEventData[T], options?: { ignorable?: true }): SessionEvent<T, CoreEventData[T]>
  append(type: string, data: JsonValue, options?: { ignorable?: true }): SessionEvent
  append(type: string, data: unknown, options: { ignorable?: true } = {}): SessionEvent {
    if (this._closed) throw new ReinError('SESSION_CLOSED', `session ${this.id} is closed`)
    if (!this.hooks.isKnown(type)) {
      throw new ReinError('UNKNOWN_EVENT_TYPE', `event type "${type}" is not defined; a plugin must call ctx.sessions.defineEvent("${type}") first`)
    }
    const time = isoNow()
    const ignorable = options.ignorable || this.hooks.isIgnorable?.(type) ? { ignorable: true as const } : {}
    let event: SessionEvent
    try {
      // Marked as frozen JSON, not only frozen: a store that keeps a frozen copy keeps this one. Data
      // at the depth limit is refused here: the event around it could never be stored.
      event = freezeJson<SessionEvent>({ seq: this._events.length, type, time, data: toFrozenJson(data as JsonValue) as JsonValue, ...ignorable }) as SessionEvent
    } catch (error) {
      throw new ReinError('INVALID_EVENT', `event "${type}" must carry JSON data: ${(error as Error).message}`, { cause: error })
    }
    // The check every load runs: a core event it would refuse must not be written, or the whole log stops loading.
    const problem = coreEventProblem(event)
    if (problem !== undefined) throw new ReinError('INVALID_EVENT', `event "${type}" has the wrong shape: ${problem}`, { details: { type } })
    this._events.push(event)
    this._projection.push(event)
    this.hooks.appended(this, event)
    return event
  }

  /** Makes every appended event durable. Throws `SESSION_FLUSH_FAILED`; the events stay pending. */
  flush(): Promise<void> {
    return this.serialize(() => this.writePending(true))
  }

  /**
   * Hands every appended event to the store, where a killed process cannot lose it; a power loss
   * still may (a store without `write` flushes instead). The barrier before a side effect that is
   * safe to repeat, such as a replay-safe tool's body: losing its record costs a rerun, not harm.
   * Throws `SESSION_FLUSH_FAILED`; the events stay pending.
   */
  write(): Promise<void> {
    return this.serialize(() => this.writePending(this.store.write === undefined))
  }

  private serialize(step: () => Promise<void>): Promise<void> {
    const run = this._flushing.then(step)
    this._flushing = run.catch(() => {})
    return run
  }

  private async writePending(durable: boolean): Promise<void> {
    // Appends may come while the store works: only those before `end` are in this batch.
    const end = this._events.length
    if (end === (durable ? this._durable : this._written)) return
    const batch = this._events.slice(this._written, end)
    try {
      if (batch.length > 0) await this.store.append(this.id, batch)
      if (durable) await this.store.flush(this.id)
      else await this.store.write?.(this.id)
    } catch (error) {
      const reason = isReinError(error) ? `${error.code}: ${error.message}` : (error as Error).message
      throw new ReinError('SESSION_FLUSH_FAILED', `could not save session ${this.id}: ${reason}`, { cause: error })
    }
    this._written = end
    if (!durable) return
    const madeDurable = this._events.slice(this._durable, end)
    this._durable = end
    this.hooks.flushed(this, madeDurable)
  }

  /**
   * The session's folder for files that go with its log (spills, checkpoints): an absolute path to
   * a 0700 folder, made on the first call. The store's (`SessionStore.folder`), or for a store
   * without folders a temporary one that goes when the store or the service does. A failure is
   * not remembered: the next call tries again.
   */
  folder(): Promise<string> {
    if (this._folder === undefined) {
      const folder = this.store.folder ? this.store.folder(this.id) : this.hooks.tempFolder?.(this.id)
      if (folder === undefined) return Promise.reject(new ReinError('NO_SESSION_FOLDER', `session ${this.id} has no folder: its store keeps none and it was not made by ctx.sessions`))
      this._folder = folder
      folder.then((path) => { this._folderPath = path }, () => { if (this._folder === folder) this._folder = undefined })
    }
    return this._folder
  }

  /**
   * Where `folder()` is, without making it: the store's answer (`SessionStore.folderPath`), or the
   * temporary folder's path; undefined for a store that keeps folders but cannot name one unmade,
   * until `folder()` made it. For a path to hand out (to a tool that may read spills) without a
   * file-system call per use.
   */
  folderPath(): string | undefined {
    // Asked at every tool batch; the answer never changes for a session.
    this._folderPath ??= this.store.folder ? this.store.folderPath?.(this.id) : this.hooks.tempFolderPath?.(this.id)
    return this._folderPath
  }

  /** The messages the next request carries: `deriveMessages(events)`, kept up to date as events are appended. */
  messages(): readonly Message[] {
    return this._projection.messages()
  }

  /** How many turns the log has started: the next turn's number is one more. */
  get turns(): number {
    return this._projection.turns
  }

  /** Whether the log holds a compaction (`context/compacted`): some messages are stubs or a summary. */
  get compacted(): boolean {
    return this._projection.compacted
  }

  /** The same messages, each with the seq of the event it came from: how a compaction names the range it replaces. */
  messageEntries(): { seq: number; message: Message }[] {
    return this._projection.entries()
  }

  /**
   * Runs `hook` when the session is about to close (by its owner, or because its store or the
   * service went away), before the last flush: an agent ends its running turn there, so the turn's
   * end is saved. Returns a function that removes the hook.
   */
  beforeClose(hook: () => void | Promise<void>): () => void {
    this._beforeClose.add(hook)
    return () => this._beforeClose.delete(hook)
  }

  /**
   * Runs the `beforeClose` hooks, then the `session/close` listeners (bounded), flushes, and
   * releases the store's claim. Later appends fail with `SESSION_CLOSED`.
   */
  close(): Promise<void> {
    this._closing ??= this.shutDown()
    return this._closing
  }

  private async shutDown(): Promise<void> {
    for (const hook of Array.from(this._beforeClose)) {
      try {
        await hook()
      } catch {
        // A hook that fails must not keep the session open; its owner reports its own errors.
      }
    }
    await this.hooks.closing?.(this).catch(() => {})
    try {
      await this.flush()
    } finally {
      this._closed = true
      try {
        await this.store.close(this.id)
      } finally {
        this.hooks.closed?.(this)
      }
    }
  }
}
