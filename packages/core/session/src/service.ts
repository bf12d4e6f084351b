/** The `ctx.sessions` service: the store in use, the event types plugins define, and open sessions. */

import { randomUUID } from 'node:crypto'
import { Context, Service, type Logger } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import { CORE_EVENT_TYPES, SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from './events.ts'
import { Session, type SessionHooks } from './session.ts'
import type { LoadedSession, SessionStore, SessionSummary } from './store.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    sessions: SessionService
  }
  interface Events {
    /** An event was appended (not yet durable). Listeners run synchronously. */
    'session/append'(session: Session, event: SessionEvent): void
    /** These events became durable. */
    'session/flush'(session: Session, events: readonly SessionEvent[]): void
  }
}

export interface CreateSessionOptions {
  /** Default: a random UUID. */
  id?: string
  cwd: string
  parentSessionId?: string
  depth?: number
}

interface ServiceState {
  store: SessionStore | undefined
  types: Map<string, number>
  logger: Logger
  /** Sessions created or opened here and not closed yet, with the store each belongs to. */
  open: Map<Session, SessionStore>
}

export class SessionService extends Service {
  private _state: ServiceState

  constructor(ctx: Context) {
    super(ctx, 'sessions')
    const state: ServiceState = { store: undefined, types: new Map(CORE_EVENT_TYPES.map((type) => [type, 1])), logger: ctx.logger('sessions'), open: new Map() }
    this._state = state
    // Without the service nothing can write a session: close every open one, saving what it holds.
    ctx.effect(() => () => closeSessions(state, () => true), 'sessions: close open sessions')
  }

  /**
   * Makes `store` the one sessions are kept in, until disposed. A second store → `DUPLICATE_STORE`.
   * When it goes, the sessions open on it are closed first (their owners' `beforeClose` hooks run,
   * then what they hold is flushed), then the store's own `dispose` releases anything left.
   */
  registerStore(store: SessionStore): () => Promise<void> {
    const state = this._state
    return this.ctx.effect(() => {
      if (state.store) throw new ReinError('DUPLICATE_STORE', 'a session store is already registered; load only one store plugin')
      state.store = store
      return async () => {
        if (state.store === store) state.store = undefined
        await closeSessions(state, (owner) => owner === store)
        await store.dispose?.()
      }
    }, 'sessions.registerStore')
  }

  /** Lets plugins append events of `type`, and lets logs that contain them load. */
  defineEvent(type: string): () => Promise<void> {
    if (!/^[a-z][\w-]*\/[\w/-]+$/.test(type)) throw new ReinError('INVALID_EVENT_TYPE', `event type "${type}" must look like "area/name"`)
    const { types } = this._state
    return this.ctx.effect(() => {
      types.set(type, (types.get(type) ?? 0) + 1)
      return () => {
        const count = (types.get(type) ?? 1) - 1
        if (count > 0) types.set(type, count)
        else types.delete(type)
      }
    }, `sessions.defineEvent(${type})`)
  }

  /** A new session, claimed for writing. Nothing is stored until its first flush. */
  async create(options: CreateSessionOptions): Promise<Session> {
    const store = this.requireStore()
    const header: SessionHeader = {
      formatVersion: SESSION_FORMAT_VERSION,
      id: options.id ?? randomUUID(),
      createdAt: new Date().toISOString(),
      cwd: options.cwd,
      depth: options.depth ?? 0,
      ...(options.parentSessionId ? { parentSessionId: options.parentSessionId } : {}),
    }
    await store.create(header)
    return this.track(new Session(header, [], store, this.hooks()), store)
  }

  /** A stored session, claimed for writing (`SESSION_LOCKED` if another process has it). Check `planRepair` before use. */
  async open(id: string): Promise<Session> {
    const store = this.requireStore()
    const loaded = await store.open(id)
    try {
      this.check(loaded)
    } catch (error) {
      await store.close(id)
      throw error
    }
    return this.track(new Session(loaded.header, loaded.events, store, this.hooks()), store)
  }

  /** A stored session, read-only. */
  async load(id: string): Promise<LoadedSession> {
    const loaded = await this.requireStore().load(id)
    this.check(loaded)
    return loaded
  }

  async list(): Promise<SessionSummary[]> {
    return this.requireStore().list()
  }

  /** Refuses a log it cannot read faithfully: a newer format, or an event type nothing defines. */
  private check({ header, events }: LoadedSession) {
    if (header.formatVersion > SESSION_FORMAT_VERSION) {
      throw new ReinError('SESSION_FORMAT_UNSUPPORTED', `session ${header.id} was written by a newer rein (format ${header.formatVersion}, this one reads ${SESSION_FORMAT_VERSION}); upgrade rein to open it`)
    }
    const { types } = this._state
    const unknown = events.find((event) => !event.ignorable && !types.has(event.type))
    if (unknown) {
      throw new ReinError('SESSION_UNKNOWN_EVENT', `session ${header.id} has event #${unknown.seq} of type "${unknown.type}", which no loaded plugin defines; load the plugin that wrote it`, { details: { seq: unknown.seq, type: unknown.type } })
    }
  }

  private track(session: Session, store: SessionStore): Session {
    this._state.open.set(session, store)
    return session
  }

  private requireStore(): SessionStore {
    const { store } = this._state
    if (!store) throw new ReinError('NO_SESSION_STORE', 'no session store is loaded; add @rein/session-jsonl to cordis.yml')
    return store
  }

  private hooks(): SessionHooks {
    const { types, logger, open } = this._state
    const ctx = this.ctx
    const report = (error: unknown) => logger.error('a session listener failed: %s', error)
    return {
      isKnown: (type) => types.has(type),
      closed: (session) => { open.delete(session) },
      appended: (session, event) => { ctx.parallel('session/append', session, event).catch(report) },
      flushed: (session, events) => { ctx.parallel('session/flush', session, events).catch(report) },
    }
  }
}

/** Closes the open sessions `which` selects; a close that fails is logged, the others still close. */
async function closeSessions(state: ServiceState, which: (store: SessionStore) => boolean): Promise<void> {
  const sessions = [...state.open].filter(([, store]) => which(store)).map(([session]) => session)
  await Promise.all(sessions.map((session) => session.close().catch((error: unknown) => {
    state.logger.error('session %s could not be saved while closing: %s', session.id, error)
  })))
}
