/**
 * `Agent`: one conversation bound to one session. `send` runs a turn (see turn.ts): steps of
 * request → answer → tool calls until the model stops asking for tools, a budget is reached, the
 * turn is cancelled, or something fails. Whatever happens, every tool call ends up paired with
 * exactly one result and the turn is closed in the log.
 */

import { setMaxListeners } from 'node:events'
import { ReinError, kindOf } from '@rein/base'
import { createMessage, type Message, type TokenUsage } from '@rein/llm'
import type { ContextCompacted, Session } from '@rein/session'
import type { RunIdentity } from '@rein/tools'
import { Tally } from './accounting.ts'
import { compactIdle } from './compaction/idle.ts'
import type { CompactionAsked } from './compaction/step.ts'
import { ContextMeter, loggedReport } from './compaction/meter.ts'
import { CallIds } from './call-ids.ts'
import type { AgentEvent, TurnResult } from './events.ts'
import type { AgentOptions } from './options.ts'
import { latestUserMessage, newRunId, runIdentity, type ParentRun } from './identity.ts'
import { findLastHeader, recordedPins, type RequestHeader } from './request-header.ts'
import { budgetLeft, NextRun, tighter, TreeSpend, type BudgetLeft, type Charge, type Spend } from './tree-budget.ts'
import { tellUntakenRun } from './repair-run.ts'
import { runTurn, type TurnContext, type TurnServices } from './turn.ts'
import type { TurnState } from './turn-state.ts'

/** What an agent needs from the service that made it. */
export interface AgentServices extends TurnServices {
  /**
   * Opens the session again (repairing it if needed) after something other than the agent closed
   * it; subagents the repair continues work for `next`.
   */
  reopen(closed: Session, options: AgentOptions, next: NextRun): Promise<Session>
  /** Repairs the open session in place: a turn that left calls for `recover` is paired and closed, its subagents continued for `next`. */
  repair(session: Session, options: AgentOptions, next: NextRun): Promise<void>
  /** Called once the agent is closed, so the service stops tracking it. */
  closed(agent: Agent): void
}

interface Bound {
  session: Session
  headers: { last?: RequestHeader }
  pins: Map<string, string>
  callIds: CallIds
}

/** What a plugin adds to the conversation with `inject`. */
export interface Injection {
  /** The plugin's name, recorded as the message's source. */
  plugin: string
  text: string
}

/** Where an agent sits in a tree of agents, and the tools it may use (the service works it out). */
export interface AgentLineage {
  parent?: ParentRun
  /** The tools the agent may see (its own allow-list, narrowed by its parent's). */
  visible?: (name: string) => boolean
  /** Tells the live parent's running turn what this agent spends (budgets cover the tree). */
  charge?: Charge
  /** What the live parent's running turn has left (undefined between its turns). */
  left?: () => BudgetLeft | undefined
}

/** The abort reason of a turn ended because its owner went away, not because someone cancelled it. */
const INTERRUPT = new ReinError('INTERRUPTED', 'the agent was shut down while the turn ran')
/** Long enough never to fire; the timer only keeps the process alive while a turn runs. */
const KEEP_ALIVE_MS = 2 ** 30

/** One agent on one session: runs turns (`send`, `continue`), compacts, and closes its log. */
export class Agent {
  /** The session and what the agent keeps about its log; replaced when the session is reopened. */
  private _bound: Bound
  private _running: Promise<TurnResult> | undefined
  private _controller: AbortController | undefined
  private _closing: Promise<void> | undefined
  private readonly _listeners = new Set<(event: AgentEvent) => void>()
  private readonly _totals = new Tally()
  private readonly _inbox: Message[] = []
  private readonly _lineage: AgentLineage
  /** The running turn's state and what its subagents spend; undefined between turns. */
  private _turn: { state: TurnState; tree: TreeSpend } | undefined
  /** The last turn was interrupted with calls left for `recover`: the log must be repaired before the next. */
  private _leftOpen = false
  private readonly _meter: ContextMeter
  /** A compaction asked for, done before the next request. */
  private _compactAsked: CompactionAsked | undefined
  /** A compaction between turns (`compactNow`) is running: no turn may start. */
  private _compacting: Promise<void> | undefined
  /** The next run, when a repair already worked for it (subagents continued); else made when it starts. */
  private _next: NextRun | undefined
  /** What background subagents spent while no turn ran: the next turn's, in its result (not against its budgets). */
  private _idleSpend: TreeSpend | undefined

  /** `next`: the run a resume's repair continued subagents for, which the first turn is. */
  constructor(session: Session, readonly options: AgentOptions, private readonly services: AgentServices, lineage: AgentLineage = {}, next?: NextRun) {
    this._bound = this.bind(session)
    this._meter = new ContextMeter(loggedReport(session))
    this._lineage = lineage
    this._next = next
  }

  /** The run that made this agent, when it is a subagent. */
  get parent(): ParentRun | undefined {
    return this._lineage.parent
  }

  /** Whether this agent may see and run a tool (its `tools` allow-list, narrowed by its parent's). */
  canUse(name: string): boolean {
    return this._lineage.visible?.(name) ?? true
  }

  /**
   * Adds a message from a plugin (a job's notice, a memory) to the conversation. It joins the log
   * at the next step boundary — never between a call and its result — or, while the agent is idle,
   * with the next turn; it never starts a turn. The model reads it as a user message whose source
   * is the plugin.
   */
  inject(injection: Injection): void {
    const { plugin, text } = injection ?? {}
    if (typeof plugin !== 'string' || !plugin || typeof text !== 'string' || !text) {
      throw new ReinError('INVALID_INJECTION', 'inject needs {plugin, text}: the plugin\'s name and non-empty text')
    }
    if (this._closing) throw new ReinError('AGENT_CLOSED', 'the agent was closed; nothing more can be added to it')
    this._inbox.push(createMessage('user', [{ type: 'text', text }], { kind: 'plugin', plugin }))
  }

  /** How many injected messages wait for the next step or turn: news the model has not read yet. */
  get injections(): number {
    return this._inbox.length
  }

  /** The session this agent writes to. After its store was swapped it is a new handle on the same log. */
  get session(): Session {
    return this._bound.session
  }

  /** `running` during a turn or a compaction (`cancel` stops either). */
  get status(): 'idle' | 'running' {
    return this._running || this._compacting ? 'running' : 'idle'
  }

  /** Usage over every attempt this handle made, failed ones included. */
  get usage(): TokenUsage {
    return this._totals.usage
  }

  /** Money over every attempt this handle made; undefined while none was counted or once any model used was unpriced. */
  get cost(): number | undefined {
    return this._totals.cost
  }

  /** Listens to what the agent does; returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    this._listeners.add(listener)
    return () => this._listeners.delete(listener)
  }

  /**
   * What a subagent of this agent spent (a step, or an attempt's usage): counted against the
   * running turn's budgets (between turns, carried into the next turn's result, against nothing),
   * then told to this agent's own parent. Called by the service's lineage.
   */
  charge(spend: Spend): void {
    if (this._turn) this._turn.tree.add(spend)
    else (this._idleSpend ??= new TreeSpend()).add(spend)
    this._lineage.charge?.(spend)
  }

  /**
   * What the running turn has left of its budgets, its subagents' spend counted and, for a
   * subagent, no more than its parent's turn has left; undefined between turns.
   */
  budgetLeft(): BudgetLeft | undefined {
    const turn = this._turn
    return turn && tighter(budgetLeft(this.options, turn.state.step ?? 0, turn.state.tally, turn.tree), this._lineage.left?.())
  }

  /**
   * Shows this agent's listeners what a subagent working for its tool call `callId` does, so a UI
   * can show the child's progress under the call. The child's log is its own; nothing is recorded here.
   */
  relay(callId: string, sessionId: string, event: AgentEvent): void {
    this.emit({ type: 'subagent', callId, sessionId, event })
  }

  /** Starts a turn with a user message. One turn at a time: `AGENT_BUSY` otherwise. */
  send(text: string): Promise<TurnResult> {
    // Refused before the turn starts: a message the log would refuse must not leave a turn open.
    if (typeof text !== 'string') return Promise.reject(new ReinError('INVALID_MESSAGE', `send takes the message as a string, not ${kindOf(text)}`))
    return this.start(text)
  }

  /** Starts a turn without a new message: the model answers what the log already holds (after a resume). */
  continue(): Promise<TurnResult> {
    return this.start(undefined)
  }

  /**
   * Compacts the context before the next request — the running turn's next step, else the next
   * turn's first — whatever the meter says, with `instructions` for the summary (`/compact …`).
   */
  compact(instructions?: string): void {
    this._compactAsked = { reason: 'manual', ...(instructions ? { instructions } : {}) }
  }

  /**
   * Compacts now, between turns (`rein compact`, a chat's `/compact`): prunes and summarizes
   * whatever the meter says. What it wrote (`summaryFailed` set and nothing changed when the summary
   * failed with nothing to prune), or undefined when there was nothing to compact.
   */
  async compactNow(instructions?: string, signal: AbortSignal = new AbortController().signal): Promise<ContextCompacted | undefined> {
    if (this._running || this._compacting) throw new ReinError('AGENT_BUSY', 'the agent is running a turn or a compaction; wait for it')
    if (this._closing) throw new ReinError('AGENT_CLOSED', 'the agent was closed; create or resume another')
    // `cancel` and `interrupt` stop it as they stop a turn.
    const controller = new AbortController()
    this._controller = controller
    const compacting = this.acquire().then(({ session }) => compactIdle({
      session, options: this.options, llm: this.services.llm(), tools: this.services.tools(), tokens: this.services.tokens(),
      meter: this._meter, totals: this._totals, ...(instructions ? { instructions } : {}), signal: AbortSignal.any([signal, controller.signal]),
      notify: this.services.notify, turn: session.turns, identity: this.idleRun(session), emit: (event) => this.emit(event),
    }))
    this._compacting = compacting.then(() => undefined, () => undefined)
    try {
      return await compacting
    } finally {
      this._compacting = undefined
      this._controller = undefined
    }
  }

  /** The identity of a run between turns (a compaction): a fresh run id, numbered with the turn it follows. */
  private idleRun(session: Session): RunIdentity {
    const { parent } = this._lineage
    return runIdentity({ agent: this.options.name, sessionId: session.id, turn: session.turns, runId: newRunId(), anchor: latestUserMessage(session.messages()), ...(parent ? { parent } : {}) })
  }

  /** Cancels the running turn: the stream stops, running tools see their signal, unstarted calls are paired. */
  cancel(reason = 'cancelled'): void {
    this._controller?.abort(new Error(reason))
  }

  async whenIdle(): Promise<void> {
    await this._running?.catch(() => {})
    await this._compacting
  }

  /**
   * Waits for the turn, then flushes and releases the session. The agent cannot run turns
   * afterwards. A run a repair continued subagents for and no turn took is told now
   * (`agent/repair-start`, `-end`).
   */
  close(): Promise<void> {
    this._closing ??= this.whenIdle().then(async () => {
      try {
        this.endRepairRun()
      } finally {
        await this._bound.session.close()
      }
    }).finally(() => this.services.closed(this))
    return this._closing
  }

  /**
   * Ends the running turn as `interrupted` (recorded), and waits for it. A call whose tool continues
   * on resume (`recoverAfterInterrupt`) is left open with its turn, for the next resume's `recover`.
   */
  async interrupt(): Promise<void> {
    this._controller?.abort(INTERRUPT)
    await this.whenIdle()
  }

  private start(text: string | undefined): Promise<TurnResult> {
    if (this._running || this._compacting) return Promise.reject(new ReinError('AGENT_BUSY', 'the agent is already running a turn or a compaction; wait for it or cancel it'))
    if (this._closing) return Promise.reject(new ReinError('AGENT_CLOSED', 'the agent was closed; create or resume another'))
    const controller = new AbortController()
    // Every call of a batch, and each wrapper and deadline around it, waits on the turn's signal at
    // once: past Node's default of 10 it would print a leak warning the user cannot act on.
    setMaxListeners(0, controller.signal)
    this._controller = controller
    // A tool awaiting a promise that never settles must not let Node exit mid-step.
    const keepAlive = setInterval(() => {}, KEEP_ALIVE_MS)
    const { parent, visible, charge, left } = this._lineage
    const tree = new TreeSpend()
    const running = this.acquire().then(({ session, callIds, headers, pins }) => {
      if (text === undefined) this.checkSomethingToAnswer(session)
      return runTurn({
        session,
        options: this.options,
        services: this.services,
        signal: controller.signal,
        callIds,
        headers,
        pins,
        inbox: this._inbox,
        ...this.takeNextRun(parent),
        visible,
        totals: this._totals,
        compaction: {
          meter: this._meter,
          take: () => this.takeCompaction(),
          overflowed: () => {
            this._meter.forget()
            this._compactAsked ??= { reason: 'overflow' }
          },
        },
        tree,
        began: (state) => { this._turn = { state, tree } },
        charge,
        parentLeft: left,
        emit: (event) => this.emit(event),
      }, text)
    }).finally(() => {
      clearInterval(keepAlive)
      if (this._turn?.state.leftOpen) this._leftOpen = true
      this._turn = undefined
      this._running = undefined
      this._controller = undefined
    })
    this._running = running
    return running
  }

  /** A turn without a new message needs one in the log (or injected) for the model to answer: a request with none is refused by providers. */
  private checkSomethingToAnswer(session: Session): void {
    if (this._inbox.length > 0 || session.messages().some((message) => message.role === 'user')) return
    throw new ReinError('NOTHING_TO_CONTINUE', `session ${session.id} holds no message for the model to answer; send one instead of continuing`)
  }

  /** A session closed under the agent (its store or service was swapped) is opened again, repaired if needed; an open one repaired if the last turn left calls open. */
  private async acquire(): Promise<Bound> {
    const { session } = this._bound
    // A subagent a repair continues works for the run that starts next: its spend is that run's.
    if (session.closed) this._bound = this.bind(await this.services.reopen(session, this.options, this.nextRun()))
    // Interrupted calls left for `recover` get their results (a subagent continued) before a new turn starts.
    else if (this._leftOpen) await this.services.repair(session, this.options, this.nextRun())
    this._leftOpen = false
    return this._bound
  }

  private nextRun(): NextRun {
    this._next ??= new NextRun(this._lineage.charge, this._lineage.left)
    return this._next
  }

  /**
   * Tells the run a repair continued subagents for, when no turn took it, as a run of its own (so
   * their spend is in one), as `close` does; a later turn gets a run of its own. The agents service
   * calls it when disposed: an agent it leaves usable may never be closed. Nothing while a turn or
   * compaction runs: a turn may still take the run.
   */
  endRepairRun(): void {
    if (this.status === 'running') return
    const next = this._next
    this._next = undefined
    if (next) tellUntakenRun(this.services.notify, next, { agent: this.options.name, session: this._bound.session, parent: this._lineage.parent })
  }

  /**
   * The turn's run: the one a repair already worked for, else a new one; what a repair's subagents
   * spent for it and what background subagents spent since the last turn are carried into its result.
   */
  private takeNextRun(parent: ParentRun | undefined): Pick<TurnContext, 'run' | 'carried'> {
    const next = this._next
    const idle = this._idleSpend
    this._next = undefined
    this._idleSpend = undefined
    return { run: { runId: next?.runId ?? newRunId(), ...(parent ? { parent } : {}) }, carried: [next?.spent, idle].filter((spent) => spent !== undefined) }
  }

  private bind(session: Session): Bound {
    // However the session comes to close (its store or the service going away), the turn ends first.
    session.beforeClose(() => this.interrupt())
    return { session, headers: { last: findLastHeader(session.events) }, pins: recordedPins(session.events), callIds: new CallIds(session.events) }
  }

  private takeCompaction(): CompactionAsked | undefined {
    const asked = this._compactAsked
    this._compactAsked = undefined
    return asked
  }

  private emit(event: AgentEvent) {
    for (const listener of this._listeners) {
      try {
        listener(event)
      } catch {
        // A UI listener's failure must not break the turn.
      }
    }
  }
}
