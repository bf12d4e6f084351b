/**
 * After a crash (or an interrupt) left a `subagent` call without a result, the child's own log says
 * what became of it: a completed child's answer is read from there (nothing runs again); an
 * interrupted one is resumed — repaired by `ctx.agents.resume`, then continued from where its log
 * ends — and its answer read back the same way; a failed or cancelled one is that error, with what
 * it had. No child stored: it never started. One held by a live process: declined, and the
 * parent's repair pairs the call as usual.
 */

import { recordedTools, type Agent, type AgentService } from '@rein/agent'
import { addMoney, ReinError, isReinError } from '@rein/base'
import { addUsage } from '@rein/llm'
import { eventData, spending, type SessionEvent, type SessionService, type SessionSummary, type Spending } from '@rein/session'
import type { RecoverContext, Recovered, ToolRegistry } from '@rein/tools'
import type { SubagentsConfig } from './config.ts'
import { unfinished } from './outcome.ts'
import { callOptions } from './resume.ts'
import type { SubagentResult } from './types.ts'

/** What recovery needs from the service, looked up when used. */
export interface RecoverDeps {
  config: SubagentsConfig
  tools: () => ToolRegistry
  sessions: () => SessionService | undefined
  agents: () => AgentService | undefined
  /** Children running now: a child continued here is one too (disposing the plugin interrupts it). */
  running: Set<Agent>
}

/** What `ctx.agents.resume` takes besides the id. */
type ResumeOptions = NonNullable<Parameters<AgentService['resume']>[1]>

/** The call left without a result, as `recover` sees it. */
export interface RecoverableCall {
  readonly callId: string
  readonly args: { readonly prompt: string; readonly agent?: string; readonly tools?: readonly string[]; readonly resume?: string }
}

/** A child's log, as read for recovery. */
interface ChildLog {
  id: string
  events: readonly SessionEvent[]
}

/**
 * The outcome of `call`'s child, or undefined to decline. A child whose log ends mid-turn or with
 * `interrupted` gets one continuation here; whether that happens again is decided by the log
 * alone (a completed log is only read), and two processes cannot hold the child at once (its
 * session lock: a resume elsewhere makes this one fail, and so decline).
 */
export async function recoverChild(deps: RecoverDeps, call: RecoverableCall, context: Pick<RecoverContext, 'sessionId' | 'signal'>): Promise<Recovered<SubagentResult> | undefined> {
  const sessions = deps.sessions()
  if (!sessions) return undefined
  const child = await findChild(sessions, call, context.sessionId)
  // Nothing stored (or, for `resume`, no turn for this call): the crash came before the child's
  // first flush, which precedes its first request and tool, so it did no work.
  if (!child) return { error: notStarted() }
  let end = lastEnd(child.events)
  if (end === undefined || end.reason === 'interrupted') {
    const recorded = recordedTools(child.events)
    // Before its first request nothing says which tools its parent allowed, and it has done nothing.
    if (recorded === undefined) return { error: notStarted(child.id) }
    try {
      await continueChild(deps, child.id, resumeOptions(deps, call, recorded), context.signal)
    } catch (error) {
      // A live process holds it: it is not interrupted, and whatever it does is not known here.
      if (isReinError(error, 'SESSION_LOCKED')) return undefined
      // Its profile gone from Config, its model unknown, …: the model still learns which session it was.
    }
    child.events = (await sessions.load(child.id)).events
    end = lastEnd(child.events) ?? { reason: 'interrupted' }
  }
  const answer = lastAnswer(child.events)
  if (end.reason !== 'completed') return { error: unfinished(child.id, end, answer) }
  // This call's turns only: a `resume` call's child holds earlier calls' turns too. With what the
  // subagents the child started in them spent, as the live call's result has it.
  const turns = child.events.slice(Math.max(0, child.events.findIndex((event) => startedBy(event, call.callId))))
  const { usage, cost } = await treeSpending(sessions, child.id, turns)
  return { value: { sessionId: child.id, answer, reason: 'completed', usage, ...(cost === undefined ? {} : { cost }) } }
}

/**
 * What `events` (turns of session `id`) spent, and what each subagent started by a call in them
 * spent in the turns that call started, theirs included, each session counted once.
 */
async function treeSpending(sessions: SessionService, id: string, events: readonly SessionEvent[]): Promise<Spending> {
  let stored: Promise<SessionSummary[]> | undefined
  const seen = new Set<string>([id])
  const walk = async (sessionId: string, turns: readonly SessionEvent[]): Promise<Spending> => {
    let total = spending(turns)
    const calls = new Set(turns.flatMap((event) => (event.type === 'tool/call' ? [eventData(event, 'tool/call').callId] : [])))
    if (calls.size === 0) return total
    const children = (await (stored ??= sessions.list({ all: true }))).filter((summary) => summary.parentSessionId === sessionId && !seen.has(summary.id))
    for (const child of children) {
      seen.add(child.id)
      // A child log that cannot be read adds nothing it could only guess.
      const { events: its } = await sessions.load(child.id).catch(() => ({ events: [] as SessionEvent[] }))
      for (const turn of turnsStartedBy(its, calls)) total = plus(total, await walk(child.id, turn))
    }
    return total
  }
  return walk(id, events)
}

/** The turns of a log that a call in `calls` started, each up to the next turn's start. */
function turnsStartedBy(events: readonly SessionEvent[], calls: ReadonlySet<string>): SessionEvent[][] {
  const turns: SessionEvent[][] = []
  let current: SessionEvent[] | undefined
  for (const event of events) {
    if (event.type === 'turn/start') {
      const by = eventData(event, 'turn/start').parentCallId
      current = by !== undefined && calls.has(by) ? [] : undefined
      if (current) turns.push(current)
    }
    current?.push(event)
  }
  return turns
}

/** Two spends together; one that spent nothing leaves the other's cost known, one unpriced makes it unknown. */
function plus(a: Spending, b: Spending): Spending {
  if (!spentAny(b)) return a
  if (!spentAny(a)) return b
  const cost = a.cost !== undefined && b.cost !== undefined ? addMoney(a.cost, b.cost) : undefined
  return { usage: addUsage(a.usage, b.usage), ...(cost === undefined ? {} : { cost }), ...(a.usageEstimated || b.usageEstimated ? { usageEstimated: true as const } : {}) }
}

function spentAny(spend: Spending): boolean {
  return spend.cost !== undefined || spend.usage.inputTokens > 0 || spend.usage.outputTokens > 0
}

/** `TOOL_NOT_STARTED`: the child did no work, so calling again repeats nothing. */
function notStarted(sessionId?: string): ReinError {
  const which = sessionId === undefined ? '' : ` (subagent session ${sessionId} holds no request)`
  return new ReinError('TOOL_NOT_STARTED', `the session stopped before the subagent started, so it did no work${which}; call subagent again if the task is still needed`)
}

/**
 * The child `call` made: the session made for its call id by a run of `parentSessionId`, or, for a
 * `resume` call, the session it names once a turn there started for this call.
 */
async function findChild(sessions: SessionService, call: RecoverableCall, parentSessionId: string | undefined): Promise<ChildLog | undefined> {
  const { resume } = call.args
  const mine = (summary: { parentSessionId?: string }) => parentSessionId === undefined || summary.parentSessionId === parentSessionId
  if (resume === undefined) {
    const found = (await sessions.list({ all: true })).find((summary) => summary.parentCallId === call.callId && mine(summary))
    return found && { id: found.id, events: (await sessions.load(found.id)).events }
  }
  const { header, events } = await sessions.load(resume).catch(() => ({ header: undefined, events: [] }))
  if (!header || !mine(header) || !events.some((event) => startedBy(event, call.callId))) return undefined
  return { id: resume, events }
}

/** Whether `event` is a child turn's start for the parent's call `callId`. */
function startedBy(event: SessionEvent, callId: string): boolean {
  return event.type === 'turn/start' && eventData(event, 'turn/start').parentCallId === callId
}

/**
 * The child's tools and profile, as `run` gave them when it made the child: a resume must not
 * widen what the child may do. The parent agent is not live while its log is repaired, so its
 * allow-list is read from what the child's requests offered (`recorded`), narrowed again by the
 * profile and the call's `tools`. A profile gone from Config → undefined.
 */
function resumeOptions(deps: RecoverDeps, call: RecoverableCall, recorded: readonly string[]): ResumeOptions {
  // Throws for a profile gone from Config or a malformed list: the child is then not continued.
  return callOptions(deps.config, deps.tools(), call.args, recorded)
}

/**
 * Resumes the child (its own repair runs first), runs one turn on what its log holds, and closes
 * it. A stop meanwhile (the resume's own signal) interrupts it: it can be continued again.
 */
async function continueChild(deps: RecoverDeps, id: string, options: ResumeOptions, signal: AbortSignal): Promise<void> {
  const agents = deps.agents()
  if (!agents || signal.aborted) return
  const { agent } = await agents.resume(id, { ...options, signal })
  deps.running.add(agent)
  const stop = () => void agent.interrupt()
  signal.addEventListener('abort', stop, { once: true })
  try {
    if (!signal.aborted) await agent.continue()
  } finally {
    signal.removeEventListener('abort', stop)
    deps.running.delete(agent)
    await agent.close()
  }
}

/** How the log's last turn ended; undefined while it is open. */
function lastEnd(events: readonly SessionEvent[]): { reason: string; error?: { code: string; message: string } } | undefined {
  const end = events.findLast((event) => event.type === 'turn/end' || event.type === 'turn/start')
  if (end?.type !== 'turn/end') return undefined
  const { reason, error } = eventData(end, 'turn/end')
  return { reason, ...(error ? { error } : {}) }
}

/** The text of the log's last assistant message. */
function lastAnswer(events: readonly SessionEvent[]): string {
  const last = events.findLast((event) => event.type === 'assistant/message')
  if (!last) return ''
  return eventData(last, 'assistant/message').message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}
