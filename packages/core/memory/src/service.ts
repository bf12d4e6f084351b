/**
 * The `ctx.memory` service: validates and writes entries (deduplicated, superseded, refreshed),
 * recalls live ones, and keeps the memory tools and prompt section registered while a store is.
 */

import { realpath } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Context, Service } from '@deepseek-ai/cordis'
import { ReinError, isReinError } from '@rein/base'
import type {} from '@rein/tools'
import { MemoryConfig } from './config.ts'
import { normalizeContent } from './normalize.ts'
import { secretMasker } from './secrets.ts'
import { memorySection, type AgentsLike } from './section.ts'
import { createMemoryTools } from './tools.ts'
import { memoryPolicy } from './user-scope-policy.ts'
import type { MemoryDraft, MemoryEntry, MemoryPatch, MemoryStore, RecallQuery, WriteResult } from './types.ts'
import { checkDraft, checkId, checkPatch, checkQuery, checkRoot, checkSameScope, newMemoryId, retired } from './validate.ts'
import { whileStore, type StoreWatcher } from './while-store.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    memory: MemoryService
  }
  interface Events {
    /**
     * Memory is off for runs: a store that cannot be used was registered (its `unavailable`), a
     * call found the registered one damaged (`MEMORY_STORE_CORRUPT`), or the prompt block's recall
     * failed. Once per service; the error names the file when it can. For people (a CLI notice):
     * the model is never told. A later, other cause is logged as a warning instead.
     */
    'memory/unavailable'(error: ReinError): void
  }
}

interface MemoryState {
  stores: MemoryStore[]
  config: MemoryConfig
  /** The tools' and the section's registrations, told when a store comes or goes. */
  watchers: Set<StoreWatcher>
  /** The last of `write`, `update` and `forget` queued: each waits for the one before (see `mutate`). */
  queue: Promise<unknown>
  /** Why memory is off for runs, once it was (`memory/unavailable` was emitted then, once per service). */
  problem: ReinError | undefined
  /** The causes (code and message) people were told of, by the event or a warning: each is told once. */
  told: Set<string>
  /** The registered store's `MEMORY_STORE_CORRUPT`, once a call found it damaged: runs get no tools and no block, as for an `unavailable` store. */
  damaged: ReinError | undefined
  /** The registered store's `unavailable`, once it was seen (at registration, or after a call failed): memory was turned off for it. */
  offFor: ReinError | undefined
}

/** `ctx.memory`: one per composition; a store plugin (`@rein/memory-sqlite`) registers where entries live. */
export class MemoryService extends Service {
  static readonly Config = MemoryConfig

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _state: MemoryState

  constructor(ctx: Context, config: MemoryConfig) {
    super(ctx, 'memory')
    const state: MemoryState = { stores: [], config, watchers: new Set(), queue: Promise.resolve(), problem: undefined, told: new Set(), damaged: undefined, offFor: undefined }
    this._state = state
    const logger = ctx.logger('memory')
    // A store that cannot be used stays registered (so `list` reports why), but runs get neither
    // tools that could only fail nor a block: nothing the model reads mentions it.
    const usable = () => state.stores.length > 0 && state.stores[0]!.unavailable === undefined && state.damaged === undefined
    // Looked up by name, not imported: @rein/memory does not depend on @rein/agent.
    const agents = () => ctx.get('agents') as AgentsLike | undefined
    ctx.inject(['tools'], (inner) => {
      const tools = createMemoryTools(this, config, agents, logger, usable)
      whileStore(inner, state.watchers, usable, 'memory tools', [
        () => inner.tools.register(tools.memoryWrite),
        () => inner.tools.register(tools.memorySearch),
        () => inner.tools.register(tools.memoryUpdate),
        () => inner.tools.register(tools.memoryForget),
        // Always: besides asking about user memory (askUserScope), it refuses before anyone is asked.
        () => inner.tools.preExecute(memoryPolicy(tools.check, config.askUserScope, logger, () => !usable())),
      ], logger)
    })
    ctx.inject(['agents'], (inner) => {
      const section = memorySection(this, config, agents, logger, (error) => this.tellUnavailable(error))
      whileStore(inner, state.watchers, usable, 'memory prompt section', [() => {
        const host = agents()
        if (!host) throw new ReinError('NO_AGENTS', 'ctx.agents is not there')
        return host.section(section)
      }], logger)
    })
  }

  /**
   * Makes `store` the one entries live in, until the returned disposer runs or the caller is
   * disposed (which closes the store). Registers the memory tools and prompt section meanwhile.
   * `DUPLICATE_MEMORY_STORE` while another is registered.
   */
  registerStore(store: MemoryStore): () => Promise<void> {
    const state = this._state
    const { stores, watchers } = state
    return this.ctx.effect(() => {
      if (stores.length > 0) throw new ReinError('DUPLICATE_MEMORY_STORE', 'another memory store is already registered; dispose it first')
      stores.push(store)
      state.damaged = undefined
      state.offFor = store.unavailable
      if (store.unavailable !== undefined) this.tellUnavailable(store.unavailable)
      void tellWatchers(watchers)
      return async () => {
        const index = stores.indexOf(store)
        if (index >= 0) stores.splice(index, 1)
        await tellWatchers(watchers)
        await store.close?.()
      }
    }, 'memory.registerStore')
  }

  /**
   * Whether a store is registered: without one, `recall` finds nothing and writes are refused. True
   * for a store that is `unavailable` too (its calls fail with the reason).
   */
  hasStore(): boolean {
    return this._state.stores.length > 0
  }

  /**
   * Why memory is off for runs, when it is or was: the store's `unavailable`, or the first failed
   * recall of the prompt block. For a person (a command that loaded the composition after
   * `memory/unavailable` was emitted); the model is never told.
   */
  unavailable(): ReinError | undefined {
    const state = this._state
    return state.problem ?? state.stores[0]?.unavailable
  }

  /**
   * Tells people why memory is off, once per cause: `memory/unavailable` the first time (never again
   * for this service), a warning for a later cause the event did not carry (a store found damaged
   * after the block was told it was busy). The store, the block and the tools log what they hand
   * here at debug level only: this is where people hear of it.
   */
  private tellUnavailable(error: ReinError): void {
    const state = this._state
    if (!firstTold(state, error)) return
    if (state.problem !== undefined) {
      this.ctx.logger('memory').warn('memory is off: %s', error.message)
      return
    }
    state.problem = error
    try {
      this.ctx.emit('memory/unavailable', error)
    } catch (failure) {
      this.ctx.logger('memory').warn('a memory/unavailable listener failed: %s', failure)
    }
  }

  /**
   * `call` (of `store`), noting a store it finds damaged, or one whose failure made it
   * `unavailable` (a file it could only create at its first call): memory is then off for runs, as
   * for a store that could not be opened — `memory/unavailable`, and the tools and the block go.
   */
  private async watched<T>(store: MemoryStore, call: Promise<T>): Promise<T> {
    try {
      return await call
    } catch (error) {
      if (isReinError(error) && error.code === 'MEMORY_STORE_CORRUPT') this.foundDamaged(store, error)
      else if (store.unavailable !== undefined) this.foundUnavailable(store, store.unavailable)
      throw error
    }
  }

  /** `store` became `unavailable` in use: as `foundDamaged`, once, and only while it is the one registered. */
  private foundUnavailable(store: MemoryStore, error: ReinError): void {
    const state = this._state
    if (state.stores[0] !== store || state.offFor !== undefined) return
    state.offFor = error
    this.tellUnavailable(error)
    // After this turn, for the reason `foundDamaged` gives; `usable` already says no.
    setImmediate(() => void tellWatchers(state.watchers))
  }

  private foundDamaged(store: MemoryStore, error: ReinError): void {
    const state = this._state
    if (state.stores[0] !== store) {
      // A store no longer in use: memory is not off, but its file still needs moving aside.
      if (firstTold(state, error)) this.ctx.logger('memory').warn('a memory store no longer in use was found damaged: %s', error.message)
      return
    }
    if (state.damaged !== undefined) return
    state.damaged = error
    this.tellUnavailable(error)
    // After this event-loop turn, not at once: removing a tool stops its running calls, and the
    // call that found the damage is one of them; it ends first, with its own error. Other calls
    // still running then (another agent's) end ABORTED. Runs stop seeing the tools at once (their
    // `availableTo` asks `usable`): the next request, built before then, offers none.
    setImmediate(() => void tellWatchers(state.watchers))
  }

  /**
   * Validates `draft` (`INVALID_ARGS`) and saves it. A live entry of the same scope, project and
   * type with the same normalized content is refreshed (its `updatedAt` and `source`) instead of
   * added. `supersedes` retires that entry (`MEMORY_NOT_FOUND` when there is none,
   * `MEMORY_RETIRED` when another entry superseded it already).
   */
  async write(draft: MemoryDraft): Promise<WriteResult> {
    return this.mutate(async (store) => {
      const now = Date.now()
      const checked = checkDraft(draft, this._state.config.maxContentChars, now)
      const target = checked.supersedes === undefined ? undefined : await existing(store, checked.supersedes, 'supersede')
      if (target !== undefined) checkSameScope(checked, target)
      const same = await store.findSame(checked.scope, checked.projectId, checked.type, normalizeContent(checked.content), now)
      // The same correction written again (a replayed call) refreshes it; any other is refused.
      if (target?.retiredAt !== undefined && target.retiredBy !== same?.id) throw retired(target, 'supersede')
      const source = Object.freeze({ sessionId: checked.source.sessionId, ...(checked.source.messageId === undefined ? {} : { messageId: checked.source.messageId }) })
      const optional = {
        ...(checked.confidence === undefined ? {} : { confidence: checked.confidence }),
        ...(checked.expiresAt === undefined ? {} : { expiresAt: checked.expiresAt }),
      }
      if (same !== undefined) {
        const refreshed: MemoryEntry = Object.freeze({ ...same, ...optional, source, updatedAt: now })
        await store.replace(refreshed)
        if (target !== undefined && target.id !== same.id && target.retiredAt === undefined) await retire(store, target, same.id, now)
        // The stored one, which a key saved before it was known as one may be in: masked as any read.
        return Object.freeze({ entry: masked(refreshed, secretMasker()), outcome: 'refreshed' })
      }
      const entry: MemoryEntry = Object.freeze({
        id: newMemoryId(),
        scope: checked.scope,
        ...(checked.scope === 'project' ? { projectId: checked.projectId } : {}),
        type: checked.type,
        content: checked.content,
        source,
        ...optional,
        createdAt: now,
        updatedAt: now,
        ...(target === undefined ? {} : { supersedes: target.id }),
      })
      // Added before the old one is retired: a failure in between leaves both, never neither.
      await store.insert(entry)
      if (target !== undefined) await retire(store, target, entry.id, now)
      return Object.freeze({ entry, outcome: 'added' })
    })
  }

  /**
   * Changes a live entry's content, type, confidence or expiry (`null` removes it) and its
   * `updatedAt`. `MEMORY_NOT_FOUND`, `MEMORY_RETIRED`, `INVALID_ARGS`.
   */
  async update(id: string, patch: MemoryPatch): Promise<MemoryEntry> {
    checkId(id, 'memory update')
    return this.mutate(async (store) => {
      const now = Date.now()
      const checked = checkPatch(patch, this._state.config.maxContentChars, now)
      const entry = await existing(store, id, 'update')
      if (entry.retiredAt !== undefined) throw retired(entry, 'update')
      const { expiresAt: _dropped, ...rest } = entry
      const next: MemoryEntry = Object.freeze({
        ...(checked.expiresAt === null ? rest : entry),
        ...(checked.content === undefined ? {} : { content: checked.content }),
        ...(checked.type === undefined ? {} : { type: checked.type }),
        ...(checked.confidence === undefined ? {} : { confidence: checked.confidence }),
        ...(checked.expiresAt === undefined || checked.expiresAt === null ? {} : { expiresAt: checked.expiresAt }),
        updatedAt: now,
      })
      await store.replace(next)
      return masked(next, secretMasker())
    })
  }

  /** Deletes an entry (retired ones too) and returns it as it was. `MEMORY_NOT_FOUND`. */
  async forget(id: string): Promise<MemoryEntry> {
    checkId(id, 'memory forget')
    return this.mutate(async (store) => {
      const entry = await existing(store, id, 'forget')
      if (!await store.delete(id)) throw notFound(id, 'forget')
      return masked(entry, secretMasker())
    })
  }

  /** The entry, retired or expired included, or `undefined` (also without a store). */
  async get(id: string): Promise<MemoryEntry | undefined> {
    checkId(id, 'memory get')
    const store = this._state.stores[0]
    return store === undefined ? undefined : this.watched(store, store.get(id)).then((entry) => entry && masked(entry, secretMasker()))
  }

  /**
   * Live entries (neither retired nor expired) of the query's scopes, best first; `limit` is capped
   * by Config `maxRecall`. Without a store: `[]`. `INVALID_ARGS` for a malformed query.
   */
  async recall(query: RecallQuery): Promise<readonly MemoryEntry[]> {
    checkQuery(query)
    const store = this._state.stores[0]
    if (store === undefined) return Object.freeze([])
    const now = query.now ?? Date.now()
    const found = await this.watched(store, store.recall({ ...query, limit: Math.min(query.limit, this._state.config.maxRecall), now }))
    // The store promises live entries only; checked again, as a correction must never lose to what it corrects.
    return maskedAll(found.filter((entry) => entry.retiredAt === undefined && (entry.expiresAt === undefined || entry.expiresAt > now)))
  }

  /** Every entry, retired and expired included, in `createdAt` order (for `rein memory list`). Without a store: `[]`. */
  async list(): Promise<readonly MemoryEntry[]> {
    const store = this._state.stores[0]
    return store === undefined ? Object.freeze([]) : maskedAll(await this.watched(store, store.all()))
  }

  /** The project id for a workspace: Config `projectId` when set, else the root's real path (resolved when it does not exist). */
  async projectIdFor(workspaceRoot: string): Promise<string> {
    checkRoot(workspaceRoot)
    const { projectId } = this._state.config
    if (projectId !== undefined && projectId !== '') return projectId
    return realpath(workspaceRoot).catch(() => resolve(workspaceRoot))
  }

  /**
   * Runs `change` with the store, after every earlier `write`, `update` and `forget` of this service
   * has settled, and inside the store's `atomically` when it has one: a look-up and the writes it
   * decides on are never interleaved with another change, in this process or (through
   * `atomically`) another. A change that fails does not hold up the next.
   */
  private mutate<T>(change: (store: MemoryStore) => Promise<T>): Promise<T> {
    const state = this._state
    const run = state.queue.then(() => {
      const store = storeOf(state)
      return this.watched(store, store.atomically ? store.atomically(() => change(store)) : change(store))
    })
    state.queue = run.catch(() => undefined)
    return run
  }
}

/** Whether people are yet to hear of `error`'s cause (its code and message); from now on they have. */
function firstTold(state: MemoryState, error: ReinError): boolean {
  const cause = `${error.code}: ${error.message}`
  if (state.told.has(cause)) return false
  state.told.add(cause)
  return true
}

/** Tells the tools' and the section's registrations that a store came, went or broke. */
function tellWatchers(watchers: Set<StoreWatcher>): Promise<unknown> {
  return Promise.all([...watchers].map((watcher) => watcher()))
}

/** The registered store; `NO_MEMORY_STORE` when there is none. */
function storeOf(state: MemoryState): MemoryStore {
  const [store] = state.stores
  if (!store) throw new ReinError('NO_MEMORY_STORE', 'no memory store is registered; load @rein/memory-sqlite (or register one with ctx.memory.registerStore)')
  return store
}

/** The entry by id, retired or not; `MEMORY_NOT_FOUND` when there is none. */
async function existing(store: MemoryStore, id: string, action: string): Promise<MemoryEntry> {
  if (typeof id !== 'string' || id === '') throw new ReinError('INVALID_ARGS', `memory ${action} refused: the id must be a non-empty string`)
  const entry = await store.get(id)
  if (entry === undefined) throw notFound(id, action)
  return entry
}

async function retire(store: MemoryStore, entry: MemoryEntry, by: string, now: number): Promise<void> {
  await store.replace(Object.freeze({ ...entry, retiredAt: now, retiredBy: by }))
}

function notFound(id: string, action: string): ReinError {
  return new ReinError('MEMORY_NOT_FOUND', `cannot ${action} memory ${id}: there is no such entry`, { details: { id } })
}

/**
 * An entry as a reader gets it, its content masked (`secretMasker`): a key saved before it was known
 * as one (its variable unset then, or put in the store another way) would otherwise reach the
 * prompt of every session, and `rein memory list`, for good.
 */
function masked(entry: MemoryEntry, mask: (text: string) => string): MemoryEntry {
  const content = mask(entry.content)
  return content === entry.content ? entry : Object.freeze({ ...entry, content })
}

function maskedAll(entries: readonly MemoryEntry[]): readonly MemoryEntry[] {
  const mask = secretMasker()
  return Object.freeze(entries.map((entry) => masked(entry, mask)))
}
