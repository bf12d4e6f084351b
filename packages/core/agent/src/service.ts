/**
 * The `ctx.agents` service: creates and resumes agents, holds the prompt sections plugins add, and
 * ends every live agent's turn (recorded `interrupted`) when it is disposed.
 */

import { Context, Service, symbols, type Logger } from '@deepseek-ai/cordis'
import { ReinError, isReinError } from '@rein/base'
import { charTokens, type LlmRuntime, type Tokenizer } from '@rein/llm'
import type { Session, SessionEvent, SessionHeader, SessionService } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import { Agent, type AgentLineage, type AgentServices } from './agent.ts'
import type { ParentRun } from './identity.ts'
import { findRunStart, parentOf, recordedParent, type ParentRef } from './lineage.ts'
import { lifecycleNotifier, type Notify } from './lifecycle.ts'
import { AgentConfig, compactionProblem, optionsProblem, type AgentOptions } from './options.ts'
import { recordedTools } from './request-header.ts'
import { checkRoutes, modelRoutes, recordedRequest } from './routes.ts'
import { wholeTokens } from './compaction/meter.ts'
import { recallResultTool, withRecall } from './compaction/recall-tool.ts'
import { recallRoom } from './compaction/step.ts'
import { repairSession, type RepairServices, type ResumeReport } from './resume.ts'
import type { PromptSection } from './sections.ts'
import { tellUntakenRun, type RepairRunPlace } from './repair-run.ts'
import { NextRun, withinParent, type BudgetLeft, type Spend } from './tree-budget.ts'
import { narrowed, visibleTools } from './visibility.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    agents: AgentService
  }
}

/** What `ctx.agents.resume` takes besides the id. */
export type ResumeAgentOptions = Partial<AgentOptions> & {
  /**
   * For a subagent resumed by a new tool call: that call, whose run the child now works for (its
   * turns record it, its spend and budgets follow it). The session must be a child of its session.
   */
  parent?: ParentRef
  /**
   * Aborting it stops what the repair runs (a `recover` continuing a subagent): the resume saves the
   * results found and rejects `REPAIR_INTERRUPTED`, the other calls left open for the next one.
   */
  signal?: AbortSignal
}

/**
 * The options a stored session is resumed with when `resume` names no parent call, from its header
 * and log (a subagent's session resumed by a person or an embedder: its profile's). The caller's
 * own options win over them.
 */
export type ResumeDefaults = (session: { header: SessionHeader; events: readonly SessionEvent[] }) => Partial<AgentOptions> | Promise<Partial<AgentOptions>>

/** What `ctx.agents.create` takes: the agent's options, and a session id to create it under. */
export type CreateAgentOptions = Partial<AgentOptions> & {
  sessionId?: string
  /**
   * Makes a subagent: its session is a child of the parent's (header records it and the depth),
   * its runs carry the parent run's anchor and conversation, and its tools are the parent's
   * allow-list narrowed by its own.
   */
  parent?: ParentRef
}
export type { ResumeReport } from './resume.ts'
export type { ParentRef } from './lineage.ts'

interface ServiceState {
  sections: PromptSection[]
  /** The tokenizer the context meter counts with: the character heuristic unless a plugin set one. */
  tokenizer: Tokenizer
  /** Warnings said once per process (a model with no known window). */
  warned: Set<string>
  config: AgentConfig
  /** The service's own context: `llm`, `tools` and `sessions` are looked up through it at use time. */
  ctx: Context
  logger: Logger
  agents: Set<Agent>
  notify: Notify
  /** Services looked up since one of that name last changed (cordis says so: `internal/service`). */
  services: Map<keyof typeof NEEDED, NeededServices[keyof typeof NEEDED]>
  /** Sessions being repaired, by id, with the run their continued subagents work for. */
  repairing: Map<string, NextRun>
  /**
   * Runs a failed `resume`'s repair continued subagents for, by session id: a retry for the same
   * parent run takes one as its agent's first run, so its turn's result holds that spend; told as
   * runs of their own otherwise (another parent run resumes the session, or the service goes).
   */
  untaken: Map<string, UntakenRun>
  /** Set once the service is disposed: nothing may be held for a retry any more. */
  disposed: boolean
  /** What a plugin gives a session resumed without a parent call (`resumeDefaults`). */
  resumeDefaults?: ResumeDefaults
}

/** A run a repair worked for that no turn took yet, and where it was. */
interface UntakenRun {
  next: NextRun
  place: RepairRunPlace
}

/** Services the agent needs; looked up when used, never injected, so swapping one never restarts this service. */
const NEEDED = { llm: '@rein/llm', tools: '@rein/tools', sessions: '@rein/session' } as const

/** `ctx.agents`: creates and resumes agents on the composed llm, tools and sessions, and compacts stored sessions. */
export class AgentService extends Service {
  static readonly Config = AgentConfig

  private _state: ServiceState

  constructor(ctx: Context, config: AgentConfig) {
    super(ctx, 'agents')
    const logger = ctx.logger('agents')
    const state: ServiceState = { sections: [], tokenizer: charTokens, warned: new Set(), config, ctx, logger, agents: new Set(), notify: lifecycleNotifier(ctx, logger), services: new Map(), repairing: new Map(), untaken: new Map(), disposed: false }
    this._state = state
    // A provider row that starts, stops or is swapped: the next step looks the service up again.
    ctx.on('internal/service', (name) => { state.services.delete(name as keyof typeof NEEDED) })
    ctx.effect(() => {
      state.disposed = false
      return () => shutDown(state)
    }, 'agents: end running turns')
    // Compaction prunes old results to stubs that name this tool: the model can read them again.
    ctx.inject(['tools'], (inner) => {
      inner.tools.register(recallResultTool((sessionId) => {
        const agent = this.liveAgent(sessionId)
        return agent && { session: agent.session, room: () => recallRoom(agent.options, serviceOf(state, 'llm'), state.tokenizer) }
      }))
    })
  }

  /**
   * Counts tokens for the context meter with `tokenizer` (a model's own, say) until the calling
   * plugin is disposed; the character heuristic otherwise (see the README).
   */
  tokenizer(tokenizer: Tokenizer): () => Promise<void> {
    if (typeof tokenizer !== 'function') throw new ReinError('INVALID_TOKENIZER', 'a tokenizer is a function from text to a number of tokens')
    const state = this._state
    return this.ctx.effect(() => {
      // Counts go into the log (a cut-off request's estimate, a summary's mark) as whole tokens.
      const counted = wholeTokens(tokenizer)
      state.tokenizer = counted
      return () => { if (state.tokenizer === counted) state.tokenizer = charTokens }
    }, 'agents.tokenizer')
  }

  /**
   * Has `defaults` give the options of a stored session resumed without a parent call, until the
   * calling plugin is disposed (@rein/subagents gives a child its profile's). One at a time: a later
   * one replaces it.
   */
  resumeDefaults(defaults: ResumeDefaults): () => Promise<void> {
    if (typeof defaults !== 'function') throw new ReinError('INVALID_RESUME_DEFAULTS', 'resume defaults are a function from a stored session to agent options')
    const state = this._state
    return this.ctx.effect(() => {
      state.resumeDefaults = defaults
      return () => { if (state.resumeDefaults === defaults) state.resumeDefaults = undefined }
    }, 'agents.resumeDefaults')
  }

  /** Adds a part of the system prompt until disposed. Ids are unique. */
  section(section: PromptSection): () => Promise<void> {
    const { sections } = this._state
    if (typeof section.render !== 'function' || typeof section.id !== 'string') throw new ReinError('INVALID_SECTION', 'a prompt section needs an id and a render function')
    return this.ctx.effect(() => {
      if (sections.some((other) => other.id === section.id)) throw new ReinError('DUPLICATE_SECTION', `a prompt section with id "${section.id}" is already registered`)
      sections.push(section)
      return () => {
        const index = sections.indexOf(section)
        if (index >= 0) sections.splice(index, 1)
      }
    }, `agents.section(${section.id})`)
  }

  /**
   * A new agent on a new session. Options are checked first: a bad route or allow-list creates
   * nothing. A subagent works where its parent works unless `cwd`/`workspaceRoot` say otherwise.
   */
  async create(options: CreateAgentOptions = {}): Promise<Agent> {
    // Called through `ctx.agents`, `this` is cordis's tracing proxy: each read of it makes a proxy.
    // Nothing below registers into the caller's scope, so the service itself does the work.
    const self = untraced(this)
    const { parent: ref, sessionId, ...rest } = options
    checkOptions(rest)
    const parent = ref ? await self.parentRun(ref) : undefined
    // A subagent gets at most what its parent's running turn has left: budgets cover the tree.
    const left = parent && self.liveAgent(parent.run.sessionId)?.budgetLeft()
    const resolved = await self.resolve({ ...parent?.workplace, ...stripUndefined(rest) }, parent !== undefined, left)
    const lineage = self.lineage(parent?.run, resolved)
    const session = await serviceOf(self._state, 'sessions').create({ cwd: resolved.cwd, ...(sessionId ? { id: sessionId } : {}), ...(ref ? { parent: ref } : {}) })
    return self.track(new Agent(session, resolved, self.agentServices(), lineage))
  }

  /**
   * The parent run's anchor, conversation and depth, from its log (the live one when its agent is
   * here), and where the parent works: its agent's options, else its session's cwd.
   */
  private async parentRun(ref: ParentRef): Promise<{ run: ParentRun; workplace: Pick<AgentOptions, 'cwd' | 'workspaceRoot'> }> {
    const live = this.liveAgent(ref.sessionId)
    const { header, events } = live?.session ?? await serviceOf(this._state, 'sessions').load(ref.sessionId)
    const start = findRunStart(events, ref.runId)
    if (!start) {
      throw new ReinError('PARENT_RUN_NOT_FOUND', `session ${ref.sessionId} has no run ${ref.runId}; pass the run identity the tool call got (run.identity)`, { details: { ...ref } })
    }
    const workspaceRoot = live?.options.workspaceRoot
    return {
      run: { ...ref, anchor: start.anchor ?? ref.runId, conversationId: start.conversationId ?? ref.sessionId, depth: header.depth },
      workplace: { cwd: live?.options.cwd ?? header.cwd, ...(workspaceRoot !== undefined ? { workspaceRoot } : {}) },
    }
  }

  /**
   * A subagent's place in the tree: its parent run, its tools narrowed by a live parent agent's,
   * and its spend charged to that agent's running turn. A child its parent's repair continues
   * (`recover`) works for the run the parent starts next, is charged to it, and is held to what
   * the parent's own live ancestor has left.
   */
  private lineage(recorded: ParentRun | undefined, options: AgentOptions): AgentLineage {
    const next = recorded && this._state.repairing.get(recorded.sessionId)
    if (next) next.named = true
    const parent = next ? { ...recorded, runId: next.runId, pending: true } : recorded
    const parentAgent = parent && this.liveAgent(parent.sessionId)
    const visible = withRecall(narrowed(parentAgent ? (name) => parentAgent.canUse(name) : undefined, visibleTools(options.tools)))
    const charge = next?.charge ?? (parentAgent ? (spend: Spend) => parentAgent.charge(spend) : undefined)
    const left = next ? next.left : parentAgent && (() => parentAgent.budgetLeft())
    return { ...(parent ? { parent } : {}), ...(visible ? { visible } : {}), ...(charge ? { charge } : {}), ...(left ? { left } : {}) }
  }

  /**
   * The live agent on a session, if this service runs one: how a plugin that knows a run's
   * identity (a job's owner, say) reaches its agent to `inject` a message.
   */
  find(sessionId: string): Agent | undefined {
    return this.liveAgent(sessionId)
  }

  /**
   * The live agents this service runs, subagents included, as they are now: how a plugin finds
   * every agent of one conversation (`agent.parent?.conversationId ?? agent.session.id`).
   */
  list(): Agent[] {
    return [...this._state.agents]
  }

  private liveAgent(sessionId: string): Agent | undefined {
    for (const agent of this._state.agents) if (agent.session.id === sessionId) return agent
    return undefined
  }

  /**
   * An agent on a stored session. The route and generation options the log last used are the
   * defaults here (explicit `options` win). A log that ends mid-turn is repaired first: replay-safe
   * calls with an unknown outcome are run once more, every other unpaired call is paired with an
   * error result, and the turn is closed as `interrupted`. When a resume fails after its repair
   * continued subagents, a retry for the same parent run goes on with the run they worked for: its
   * first turn's result carries their spend, counted once.
   */
  async resume(id: string, options: ResumeAgentOptions = {}): Promise<{ agent: Agent; repaired: ResumeReport }> {
    const { parent: ref, signal, ...rest } = options
    // What the caller gives is checked; what the log recorded was accepted when it was written.
    checkOptions(rest)
    const session = await serviceOf(this._state, 'sessions').open(id)
    let untaken: UntakenRun | undefined
    try {
      if (ref && session.header.parentSessionId !== ref.sessionId) {
        throw new ReinError('NOT_A_CHILD', `session ${id} is not a subagent of session ${ref.sessionId}, so that session cannot resume it`, { details: { sessionId: id, parentSessionId: ref.sessionId } })
      }
      // A child resumed by a later call works for that call's run: budgets, spend and anchor follow it.
      const parent = ref ? (await this.parentRun(ref)).run : recordedParent(session.header, session.events)
      // A child its parent's repair continues is held to what that parent's live ancestor has left.
      const left = ref ? this.liveAgent(ref.sessionId)?.budgetLeft() : parent && this._state.repairing.get(parent.sessionId)?.left?.()
      const wanted = { ...(ref ? {} : await defaultsFor(this._state, session)), ...stripUndefined(rest) }
      // A child given no allow-list keeps the one its last request had, not the service's default of
      // every tool; one that made no request yet is known to be allowed none.
      const kept = session.header.depth > 0 && wanted.tools === undefined ? recordedTools(session.events) ?? [] : undefined
      const recorded = { cwd: session.header.cwd, ...recordedRequest(session.events, wanted), ...(kept === undefined ? {} : { tools: kept }) }
      const resolved = await this.resolve({ ...recorded, ...wanted }, session.header.depth > 0, left)
      const lineage = this.lineage(parent, resolved)
      // The agent's first run is named now: the subagents its repair continues work for it. A
      // retry of a resume that failed goes on with that one's run, and what it continued.
      const next = takeUntaken(this._state, session.id, lineage.parent) ?? new NextRun(lineage.charge, lineage.left)
      untaken = { next, place: { agent: resolved.name, session, parent: lineage.parent } }
      const repaired = await repairing(this._state, session.id, next, () => repairSession(session, repairServices(this._state), resolved, signal))
      const agent = this.track(new Agent(session, resolved, this.agentServices(), lineage, next))
      // Disposed meanwhile: no dispose will tell the run now, so it is told as the service's shutdown would have.
      if (this._state.disposed) agent.endRepairRun()
      return { agent, repaired }
    } catch (error) {
      try {
        // The children the repair continued before it failed worked for a run no turn has taken yet.
        if (untaken) holdUntaken(this._state, session.id, untaken)
      } finally {
        await session.close().catch(() => {})
      }
      throw error
    }
  }

  /**
   * Closes a stored session that no process runs — a background subagent whose process died —
   * without continuing it: what its log left open is repaired as `resume` would, minus what would
   * run work again. Each started call's tool is asked `recover` (a command the call left running is
   * stopped) except a subagent's (`recoverAfterInterrupt`: its recover continues the child; the
   * caller closes that child likewise), nothing replay-safe is run again, the rest is paired and
   * the turn closed `interrupted`. `SESSION_LOCKED` while a process holds the session.
   */
  async repair(id: string, options: { signal?: AbortSignal } = {}): Promise<ResumeReport> {
    const state = this._state
    const session = await serviceOf(state, 'sessions').open(id)
    let repair: Promise<ResumeReport> | undefined
    // The store or the session service going meanwhile (rein exiting) closes the session: the close
    // waits for the repair, or a command its tool just stopped would be recorded nowhere.
    const release = session.beforeClose(() => repair?.then(() => {}, () => {}))
    try {
      // The row's spill limits; where its tools worked, from its header (nothing says a workspace root).
      repair = repairSession(session, repairServices(state), { ...state.config, cwd: session.header.cwd }, options.signal, 'close')
      return await repair
    } finally {
      release()
      await session.close()
    }
  }

  /**
   * Options with the service's defaults, within what the parent's turn has `left` (a budget it
   * inherits is checked like its own: an unpriced model under a `maxCost` is refused here), checked
   * against the model routes (catalogs looked up first). A subagent does not inherit the row's
   * `memory`: it gets memory only when its own options give it (or @rein/memory's Config lets subagents in).
   */
  private async resolve(options: Partial<AgentOptions>, child = false, left?: BudgetLeft): Promise<AgentOptions> {
    const { memory: _rowMemory, ...rowDefaults } = this._state.config
    const merged = { ...(child ? rowDefaults : this._state.config), ...stripUndefined(options) }
    const { provider, model } = merged
    if (!provider || !model) {
      const missing = [...(provider ? [] : ['provider']), ...(model ? [] : ['model'])]
      throw new ReinError('NO_MODEL', `no ${missing.join(' and ')} configured: set ${missing.join(' and ')} on the agents row in cordis.yml, or pass ${missing.length > 1 ? 'them' : 'it'}`, { details: { missing } })
    }
    const resolved = withinParent({ ...merged, provider, model, cwd: options.cwd ?? process.cwd() }, left)
    // Checks the allow-list: a bad one fails here, before any session exists.
    visibleTools(resolved.tools)
    const llm = serviceOf(this._state, 'llm')
    await Promise.all(modelRoutes(resolved).map(([, route]) => llm.modelInfo(route.provider, route.model)))
    checkRoutes(resolved, llm)
    const problem = compactionProblem(resolved.compaction)
    if (problem) throw new ReinError('CONFIG_INVALID', problem)
    return resolved
  }

  private track(agent: Agent): Agent {
    this._state.agents.add(agent)
    return agent
  }

  private agentServices(): AgentServices {
    const state = this._state
    return {
      llm: () => serviceOf(state, 'llm'),
      tools: () => serviceOf(state, 'tools'),
      approval: () => state.ctx.get('approval'),
      sections: () => state.sections,
      tokens: () => state.tokenizer,
      warnOnce: (key, text) => {
        if (state.warned.has(key)) return
        state.warned.add(key)
        state.logger.warn(text)
      },
      report: (error) => state.logger.error('a turn failed unexpectedly: %s', error),
      notify: state.notify,
      reopen: async (closed, options, next) => {
        const session = await this.openAgain(closed)
        try {
          await repairing(state, session.id, next, () => repairSession(session, repairServices(state), options))
          return session
        } catch (error) {
          await session.close().catch(() => {})
          throw error
        }
      },
      repair: async (session, options, next) => { await repairing(state, session.id, next, () => repairSession(session, repairServices(state), options)) },
      closed: (agent) => { state.agents.delete(agent) },
    }
  }

  /**
   * A closed session, claimed again. One closed before its first event may never have been stored
   * (a store need not write before the first append): it is made again, same id, same place in its tree.
   */
  private async openAgain(closed: Session): Promise<Session> {
    const sessions = serviceOf(this._state, 'sessions')
    try {
      return await sessions.open(closed.id)
    } catch (error) {
      if (closed.events.length > 0 || !isReinError(error, 'SESSION_NOT_FOUND')) throw error
      return sessions.create({ id: closed.id, cwd: closed.header.cwd, ...parentOf(closed.header) })
    }
  }

}

interface NeededServices {
  llm: LlmRuntime
  tools: ToolRegistry
  sessions: SessionService
}

/*
 * A plain function of the service's state, not a method: called through a plugin's context, `this`
 * is cordis's tracing proxy, and what its methods return is wrapped again. Kept until cordis says a
 * service of that name changed: a lookup through the context's proxy costs an Error (with its
 * stack) and two proxies, and a turn asks at every step.
 */
function serviceOf<K extends keyof typeof NEEDED>(state: ServiceState, name: K): NeededServices[K] {
  // Once the service is disposed its `internal/service` listener is gone, so a cached service could
  // be one since stopped (an llm row restarted under an agent rein chat goes on with): looked up each time.
  const known = state.disposed ? undefined : state.services.get(name) as NeededServices[K] | undefined
  if (known !== undefined) return known
  const service = state.ctx.get(name) as NeededServices[K] | undefined
  if (service === undefined) {
    throw new ReinError('SERVICE_MISSING', `ctx.${name} is not available: add a ${NEEDED[name]} row to cordis.yml (or load that plugin)`, { details: { service: name } })
  }
  const direct = untraced(service)
  if (!state.disposed) state.services.set(name, direct)
  return direct
}

/** `CONFIG_INVALID` when a caller's options would not pass the agents row's schema. */
function checkOptions(options: object): void {
  const invalid = optionsProblem(options)
  if (invalid) throw new ReinError('CONFIG_INVALID', `${invalid}; give it as the agents row's Config allows, or leave it out`)
}

/** Runs a repair of `sessionId` during which the subagents it continues work for `next`. */
async function repairing<T>(state: ServiceState, sessionId: string, next: NextRun, repair: () => Promise<T>): Promise<T> {
  state.repairing.set(sessionId, next)
  try {
    const repaired = await repair()
    next.failed = undefined
    return repaired
  } catch (error) {
    next.failed = { error }
    throw error
  } finally {
    next.endedAt = Date.now()
    if (state.repairing.get(sessionId) === next) state.repairing.delete(sessionId)
  }
}

/**
 * The run a failed resume of `sessionId` held, when this resume works for the same parent run (or,
 * like it, for none): its children's spend then belongs to this resume's first turn. One held for
 * another parent run is told as a run of its own: no turn of that run will come here.
 */
function takeUntaken(state: ServiceState, sessionId: string, parent: ParentRun | undefined): NextRun | undefined {
  const held = state.untaken.get(sessionId)
  if (!held) return undefined
  state.untaken.delete(sessionId)
  if (sameRun(held.place.parent, parent)) return held.next
  tellUntakenRun(state.notify, held.next, held.place)
  return undefined
}

/** Keeps a failed resume's run for a retry when its repair continued subagents (that spent anything, or were named its children); told now once the service is gone. */
function holdUntaken(state: ServiceState, sessionId: string, untaken: UntakenRun): void {
  if (!untaken.next.spent.any && !untaken.next.named) return
  if (state.disposed) tellUntakenRun(state.notify, untaken.next, untaken.place)
  else state.untaken.set(sessionId, untaken)
}

function sameRun(a: ParentRun | undefined, b: ParentRun | undefined): boolean {
  if (!a || !b) return a === b
  return a.sessionId === b.sessionId && a.runId === b.runId && a.callId === b.callId
}

/** The tools a repair asks, and the tokenizer and catalog it estimates a cut-off attempt with. */
function repairServices(state: ServiceState): RepairServices {
  return {
    tools: serviceOf(state, 'tools'),
    tokens: state.tokenizer,
    notify: state.notify,
    // Without a catalog the estimate is still written, unpriced.
    llm: () => (state.ctx.get('llm') === undefined ? undefined : serviceOf(state, 'llm')),
  }
}

/**
 * Interrupts every live agent's turn (each records `interrupted`), tells the run a repair worked
 * for that no turn took (as `close` does), then releases its session; runs failed resumes held for
 * a retry are told too. The agents stay usable: a later turn opens their session again (a hot swap
 * of this row), as a run of its own.
 */
async function shutDown(state: ServiceState): Promise<void> {
  state.disposed = true
  await Promise.all([...state.agents].map(async (agent) => {
    try {
      await agent.interrupt()
      agent.endRepairRun()
      await agent.session.close()
    } catch (error) {
      state.logger.error('agent on session %s did not close cleanly: %s', agent.session.id, error)
    }
  }))
  const held = [...state.untaken.values()]
  state.untaken.clear()
  for (const { next, place } of held) tellUntakenRun(state.notify, next, place)
}

/** A plugin's defaults for a resumed session; none when it has none or fails (a session must stay resumable). */
async function defaultsFor(state: ServiceState, session: Session): Promise<Partial<AgentOptions>> {
  const defaults = state.resumeDefaults
  if (!defaults) return {}
  try {
    return stripUndefined(await defaults({ header: session.header, events: session.events }))
  } catch (error) {
    state.logger.warn('session %s is resumed with the agents row\'s options: its resume defaults failed: %s', session.id, error)
    return {}
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>
}

/**
 * The service behind cordis's tracing proxy. Through the proxy, every method read makes a shadow
 * context and a proxy, many times per step. A turn resolves its services again at each step (a hot
 * swap applies at the next one) and only calls them: nothing it calls registers into the caller's
 * scope, which is what the proxy is for.
 */
function untraced<T extends object>(service: T): T {
  return (service as { [symbols.original]?: T })[symbols.original] ?? service
}
