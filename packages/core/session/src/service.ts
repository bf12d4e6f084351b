/** The `ctx.sessions` service: the store in use, the event types plugins define, and open sessions. */

import { randomUUID } from 'node:crypto'
import { Context, Service, type Events, type Logger } from '@deepseek-ai/cordis'
import { ReinError, eventSender, isReinError, type EventSender } from '@rein/base'
import { CORE_EVENT_TYPES, IGNORABLE_CORE_EVENT_TYPES, SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from './events.ts'
import { refuseMisshapenEvents } from './event-shape.ts'
import { refuseUnpairedCalls } from './step-pairing.ts'
import { Session, type SessionHooks } from './session.ts'
import type { ListOptions, LoadedSession, SessionStore, SessionSummary } from './store.ts'
import { TempFolders } from './temp-folders.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    sessions: SessionService
  }
  interface Events {
    /** An event was appended (not yet durable). Listeners run synchronously. */
    'session/append'(session: Session, event: SessionEvent): void
    /** These events became durable. */
    'session/flush'(session: Session, events: readonly SessionEvent[]): void
    /**
     * The session is closing: its `beforeClose` hooks ran, it is still open (appends, `folder()`),
     * its last flush and the store's close come next. Awaited up to 10 s, then the close goes
     * on without it; a listener's error is logged.
     */
    'session/close'(session: Session): void | Promise<void>
  }
}

/** How long a close waits for its `session/close` listeners (a checkpoint compaction) before going on. */
const CLOSE_LISTENERS_BOUND_MS = 10_000

/** Where a child session (a subagent's) comes from: the parent's session, run and tool call. */
export interface SessionParent {
  sessionId: string
  runId: string
  callId: string
}

/** The options of `ctx.sessions.create`: the id, the working folder, and the parent of a child session. */
export interface CreateSessionOptions {
  /** Default: a random UUID. */
  id?: string
  cwd: string
  /** Makes this a child session: recorded in the header, with depth = the parent's depth + 1. */
  parent?: SessionParent
  /** @deprecated Use `parent`. Recorded as given, without checking that the parent exists. */
  parentSessionId?: string
  /** @deprecated Use `parent`, which computes it. Default 0. */
  depth?: number
}

/** How an event type was defined: by how many live definitions, and whether it is ignorable. */
interface EventTypeDefinition {
  count: number
  ignorable: boolean
}

interface ServiceState {
  store: SessionStore | undefined
  types: Map<string, EventTypeDefinition>
  logger: Logger
  /** Sessions created or opened here and not closed yet, with the store each belongs to. */
  open: Map<Session, SessionStore>
  /** Folders of sessions whose store keeps none; removed with the store and with the service. */
  temp: TempFolders
  /** Ids of stored sessions being read without being open (`reading`), each with how many reads are under way. */
  reading: Map<string, number>
  /** `session/append` and `session/flush`, sent per event and per flush; asked whether `session/close` has listeners. */
  events: EventSender<SessionEvents>
  /** Logs a session listener's failure. */
  listenerFailed: (error: unknown) => void
}

type SessionEvents = Pick<Events, 'session/append' | 'session/flush' | 'session/close'>

/** The `ctx.sessions` service (also the default export): creates, opens, loads and lists sessions in the registered store. */
export class SessionService extends Service {
  private _state: ServiceState

  constructor(ctx: Context) {
    super(ctx, 'sessions')
    const types = new Map(CORE_EVENT_TYPES.map((type) => [type, { count: 1, ignorable: IGNORABLE_CORE_EVENT_TYPES.includes(type) }]))
    const logger = ctx.logger('sessions')
    const listenerFailed = (error: unknown) => logger.error('a session listener failed: %s', error)
    const events = eventSender<SessionEvents>(ctx, (_name, error) => listenerFailed(error))
    const state: ServiceState = { store: undefined, types, logger, open: new Map(), temp: new TempFolders(), reading: new Map(), events, listenerFailed }
    this._state = state
    // Without the service nothing can write a session: close every open one, saving what it holds.
    ctx.effect(() => async () => {
      await closeSessions(state, () => true)
      await removeTempFolders(state)
    }, 'sessions: close open sessions')
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
        await removeTempFolders(state)
        await store.dispose?.()
      }
    }, 'sessions.registerStore')
  }

  /**
   * Lets plugins append events of `type`, and lets logs that contain them load. `ignorable`: every
   * event of the type is written `ignorable`, so a log holding it loads without this plugin.
   * Declare a type ignorable only if the model sees none of it; what the model sees is a core
   * event. Definitions of one type must agree (`EVENT_TYPE_CONFLICT`).
   */
  defineEvent(type: string, options: { ignorable?: true } = {}): () => Promise<void> {
    if (!/^[a-z][\w-]*\/[\w/-]+$/.test(type)) throw new ReinError('INVALID_EVENT_TYPE', `event type "${type}" must look like "area/name"`)
    const { types } = this._state
    const ignorable = options.ignorable === true
    return this.ctx.effect(() => {
      const defined = types.get(type)
      if (defined && defined.ignorable !== ignorable) {
        throw new ReinError('EVENT_TYPE_CONFLICT', `event type "${type}" is already defined ${defined.ignorable ? 'ignorable' : 'not ignorable'}; a second definition must say the same`, { details: { type } })
      }
      types.set(type, { count: (defined?.count ?? 0) + 1, ignorable })
      return () => {
        const current = types.get(type)
        if (current && current.count > 1) types.set(type, { ...current, count: current.count - 1 })
        else types.delete(type)
      }
    }, `sessions.defineEvent(${type})`)
  }

  /**
   * A new session, claimed for writing. Nothing is stored until its first flush. With `parent`,
   * a child session one level below it; a parent this store does not have → `PARENT_SESSION_NOT_FOUND`.
   */
  async create(options: CreateSessionOptions): Promise<Session> {
    const store = this.requireStore()
    const header: SessionHeader = {
      formatVersion: SESSION_FORMAT_VERSION,
      id: options.id ?? randomUUID(),
      createdAt: new Date().toISOString(),
      cwd: options.cwd,
      ...await this.lineage(store, options),
    }
    await store.create(header)
    return this.track(new Session(header, [], store, this.hooks()), store)
  }

  /** A stored session, claimed for writing (`SESSION_LOCKED` if another process has it). Check `planRepair` before use. */
  async open(id: string): Promise<Session> {
    const store = this.requireStore()
    // Checked before the store cuts a torn tail: a log refused is left as it was.
    let checked = false
    const loaded = await store.open(id, { check: (read) => { this.checkForWriting(read); checked = true } })
    try {
      // A store that does not call `check` is checked here, after.
      if (!checked) this.checkForWriting(loaded)
    } catch (error) {
      await store.close(id)
      throw error
    }
    // A person may have been editing the log by hand: say what went, if it only ever was a torn write.
    if (loaded.tornBytes) this._state.logger.warn('session %s: its log ended in %d bytes of an unfinished line (a write that never completed, as a killed process leaves); they were cut so the log can go on', id, loaded.tornBytes)
    return this.track(new Session(loaded.header, loaded.events, store, this.hooks()), store)
  }

  /** A stored session, read-only. */
  async load(id: string): Promise<LoadedSession> {
    const loaded = await this.requireStore().load(id)
    this.check(loaded)
    return loaded
  }

  /**
   * The store's sessions, without those `open` and `load` would refuse for an event type no loaded
   * plugin defines: each is told to `options.unreadable` with the `SESSION_UNKNOWN_EVENT` it would
   * meet, as a damaged log is, rather than listed as if it could be resumed.
   */
  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const { types } = this._state
    const listed = await this.requireStore().list(options)
    if (options.all === true) return listed
    return listed.filter((summary) => {
      const missing = summary.requires?.find((type) => !types.has(type))
      if (missing === undefined) return true
      options.unreadable?.(summary.id, new ReinError('SESSION_UNKNOWN_EVENT', `session ${summary.id} has events of type "${missing}", which no loaded plugin defines; load the plugin that wrote them`, { details: { type: missing } }))
      return false
    })
  }

  /**
   * The folder of a session open here (`Session.folder()`): how a plugin that knows only a call's
   * `sessionId` (a checkpoint store, a wrapper) finds where that session keeps its files. During
   * `reading(id, …)` of a session not open here: where the store keeps it (`folderPath`), unmade.
   * `SESSION_NOT_OPEN` otherwise.
   */
  async folder(id: string): Promise<string> {
    for (const session of this._state.open.keys()) if (session.id === id && !session.closed) return session.folder()
    if (this._state.reading.has(id)) return this.readFolder(id)
    throw new ReinError('SESSION_NOT_OPEN', `session ${id} is not open here; its folder is only handed out while it is open`, { details: { sessionId: id } })
  }

  /**
   * Runs `read` with `folder(id)` naming stored session `id`'s folder though the session is not
   * open: for a reader that finds its files through `folder(id)` (a checkpoint store's `records`)
   * and must change nothing (rein show). Opening would claim the session (refusing its owner a
   * resume meanwhile) and tidy its log; this claims nothing, and the folder is not made. Only for
   * reading: a write there would race the process that has the session open.
   */
  async reading<T>(id: string, read: () => Promise<T>): Promise<T> {
    const { reading } = this._state
    reading.set(id, (reading.get(id) ?? 0) + 1)
    try {
      return await read()
    } finally {
      const left = (reading.get(id) ?? 1) - 1
      if (left > 0) reading.set(id, left)
      else reading.delete(id)
    }
  }

  /** Where the store keeps session `id`'s folder, as `reading` hands it out; a store that cannot name it unmade → `SESSION_NOT_OPEN`. */
  private readFolder(id: string): string {
    const path = this.requireStore().folderPath?.(id)
    if (path !== undefined) return path
    throw new ReinError('SESSION_NOT_OPEN', `session ${id} is not open here, and its store cannot name its folder without opening it`, { details: { sessionId: id } })
  }

  /** The header fields that place a new session in its tree: the parent's, and the depth. */
  private async lineage(store: SessionStore, options: CreateSessionOptions): Promise<Pick<SessionHeader, 'depth' | 'parentSessionId' | 'parentRunId' | 'parentCallId'>> {
    const { parent } = options
    if (parent === undefined) return { depth: options.depth ?? 0, ...(options.parentSessionId ? { parentSessionId: options.parentSessionId } : {}) }
    if (options.parentSessionId !== undefined || options.depth !== undefined) {
      throw new ReinError('INVALID_SESSION_OPTIONS', 'give a child session\'s parent as `parent` only; `parentSessionId` and `depth` are its deprecated form and cannot be combined with it')
    }
    return { depth: (await this.parentHeader(store, parent.sessionId)).depth + 1, parentSessionId: parent.sessionId, parentRunId: parent.runId, parentCallId: parent.callId }
  }

  /** The parent's header: from the open session here (it may not be stored yet), else from the store. */
  private async parentHeader(store: SessionStore, id: string): Promise<SessionHeader> {
    for (const session of this._state.open.keys()) if (session.id === id) return session.header
    try {
      return (await store.load(id)).header
    } catch (error) {
      if (!isReinError(error, 'SESSION_NOT_FOUND')) throw error
      throw new ReinError('PARENT_SESSION_NOT_FOUND', `the parent session ${id} does not exist in this store; create the child with the id of a stored session (rein sessions lists them)`, { cause: error, details: { parentSessionId: id } })
    }
  }

  /**
   * Refuses to go on with a log `check` takes but no request can be built from: a closed step
   * whose calls are not paired. Such a log is still read (`load`: show, rewind), since an older
   * rein wrote some (an answer cut off at its token limit, its calls dropped).
   */
  private checkForWriting(loaded: LoadedSession) {
    this.check(loaded)
    refuseUnpairedCalls(loaded.events, `session ${loaded.header.id}`)
  }

  /** Refuses a log it cannot read faithfully: a newer format, an event type nothing defines, or a core event of the wrong shape. */
  private check({ header, events }: LoadedSession) {
    if (header.formatVersion > SESSION_FORMAT_VERSION) {
      throw new ReinError('SESSION_FORMAT_UNSUPPORTED', `session ${header.id} was written by a newer rein (format ${header.formatVersion}, this one reads ${SESSION_FORMAT_VERSION}); upgrade rein to open it`)
    }
    const { types } = this._state
    const unknown = events.find((event) => !event.ignorable && !types.has(event.type))
    if (unknown) {
      throw new ReinError('SESSION_UNKNOWN_EVENT', `session ${header.id} has event #${unknown.seq} of type "${unknown.type}", which no loaded plugin defines; load the plugin that wrote it`, { details: { seq: unknown.seq, type: unknown.type } })
    }
    refuseMisshapenEvents(events, `session ${header.id}`)
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
    const { types, logger, open, temp, events, listenerFailed: report } = this._state
    const ctx = this.ctx
    return {
      isKnown: (type) => types.has(type),
      isIgnorable: (type) => types.get(type)?.ignorable === true,
      tempFolder: (id) => temp.folder(id),
      tempFolderPath: (id) => temp.path(id),
      closed: (session) => { open.delete(session) },
      // Per event: most have no listener, so nothing (an array, a closure) is made for them.
      appended: (session, event) => {
        if (events.has('session/append')) events.send('session/append', [session, event])
      },
      flushed: (session, batch) => {
        if (events.has('session/flush')) events.send('session/flush', [session, batch])
      },
      closing: async (session) => {
        if (!events.has('session/close')) return
        const listeners = ctx.parallel('session/close', session).catch(report)
        let timer: NodeJS.Timeout | undefined
        const bound = new Promise<'late'>((resolve) => { timer = setTimeout(resolve, CLOSE_LISTENERS_BOUND_MS, 'late') })
        try {
          if (await Promise.race([listeners, bound]) === 'late') {
            logger.warn('session %s: session/close listeners did not finish within %d ms; closing without them', session.id, CLOSE_LISTENERS_BOUND_MS)
          }
        } finally {
          clearTimeout(timer)
        }
      },
    }
  }
}

/** Deletes the temporary session folders; a failure is logged, not thrown into a dispose. */
async function removeTempFolders(state: ServiceState): Promise<void> {
  await state.temp.remove().catch((error: unknown) => {
    state.logger.error('temporary session folders could not be removed: %s', error)
  })
}

/** Closes the open sessions `which` selects; a close that fails is logged, the others still close. */
async function closeSessions(state: ServiceState, which: (store: SessionStore) => boolean): Promise<void> {
  const sessions = [...state.open].filter(([, store]) => which(store)).map(([session]) => session)
  await Promise.all(sessions.map((session) => session.close().catch((error: unknown) => {
    state.logger.error('session %s could not be saved while closing: %s', session.id, error)
  })))
}
