/**
 * After a crash left a `subagent` call without a result, the child's own log says what became of
 * it: a completed child's answer is read from there (nothing runs again); an interrupted one is
 * resumed — repaired by `ctx.agents.resume`, then continued from where its log ends — and its answer
 * read back the same way. No child stored, or one that failed or is held by a live process:
 * declined, and the parent's repair pairs the call as usual.
 */

import type { AgentService } from '@rein/agent'
import { eventData, type SessionEvent, type SessionService, type SessionSummary } from '@rein/session'
import type { RecoverContext, ToolRegistry } from '@rein/tools'
import { childTools } from './child-tools.ts'
import type { SubagentsConfig } from './config.ts'
import type { SubagentResult } from './types.ts'

/** What recovery needs from the service, looked up when used. */
export interface RecoverDeps {
  config: SubagentsConfig
  tools: () => ToolRegistry
  sessions: () => SessionService | undefined
  agents: () => AgentService | undefined
}

/** What `ctx.agents.resume` takes besides the id. */
type ResumeOptions = NonNullable<Parameters<AgentService['resume']>[1]>

/** The call a crash left without a result, as `recover` sees it. */
export interface RecoverableCall {
  readonly callId: string
  readonly args: { readonly agent?: string; readonly tools?: readonly string[] }
}

/**
 * The answer for `call`'s child, or undefined to decline. A child whose log ends mid-turn or with
 * `interrupted` gets one continuation here; whether that happens again is decided by the log
 * alone (a completed log is only read), and two processes cannot hold the child at once (its
 * session lock: a resume elsewhere makes this one fail, and so decline).
 */
export async function recoverChild(deps: RecoverDeps, call: RecoverableCall, context: Pick<RecoverContext, 'sessionId' | 'signal'>): Promise<SubagentResult | undefined> {
  const sessions = deps.sessions()
  if (!sessions) return undefined
  const child = await findChild(sessions, call.callId, context.sessionId)
  // No child stored: the crash came before its first flush, so it did no work worth keeping.
  if (!child) return undefined
  if (child.status === 'completed') return readAnswer(sessions, child)
  if (child.status !== 'needs-repair' && child.status !== 'interrupted') return undefined
  const agents = deps.agents()
  const options = resumeOptions(deps, call, recordedTools((await sessions.load(child.id)).events))
  if (!agents || !options) return undefined
  await continueChild(agents, child.id, options, context.signal)
  const after = await findChild(sessions, call.callId, context.sessionId)
  return after?.status === 'completed' ? readAnswer(sessions, after) : undefined
}

/** The child session made for `callId` by a run of `parentSessionId`. */
async function findChild(sessions: SessionService, callId: string, parentSessionId: string | undefined): Promise<SessionSummary | undefined> {
  const summaries = await sessions.list()
  return summaries.find((summary) => summary.parentCallId === callId && (parentSessionId === undefined || summary.parentSessionId === parentSessionId))
}

/**
 * The child's tools and profile, as `run` gave them when it made the child: a resume must not
 * widen what the child may do. The parent agent is not live while its log is repaired, so its
 * allow-list is read from what the child's requests offered (`recorded`), narrowed again by the
 * profile and the call's `tools`. A profile gone from Config → undefined.
 */
function resumeOptions(deps: RecoverDeps, call: RecoverableCall, recorded: readonly string[] | undefined): ResumeOptions | undefined {
  const { agent, tools } = call.args
  const profile = agent === undefined ? undefined : Object.hasOwn(deps.config.profiles, agent) ? deps.config.profiles[agent] : undefined
  if (agent !== undefined && !profile) return undefined
  let names: string[] | undefined
  try {
    names = childTools(deps.tools(), [profile?.tools, tools])
  } catch {
    return undefined
  }
  if (recorded !== undefined) names = names === undefined ? [...recorded] : names.filter((name) => recorded.includes(name))
  return {
    name: agent ?? 'subagent',
    ...(profile?.system === undefined ? {} : { system: profile.system }),
    ...(profile?.maxSteps === undefined ? {} : { maxSteps: profile.maxSteps }),
    ...(profile?.memory === undefined ? {} : { memory: profile.memory }),
    ...(names === undefined ? {} : { tools: names }),
  }
}

/** The tool names the child's last request offered (the set its parent allowed), or undefined before its first request. */
function recordedTools(events: readonly SessionEvent[]): string[] | undefined {
  const header = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').tools !== undefined)
  if (!header) return undefined
  const { tools } = eventData(header, 'request/header')
  return Array.isArray(tools) ? tools.flatMap((tool) => (typeof tool === 'object' && tool !== null && !Array.isArray(tool) && typeof tool.name === 'string' ? [tool.name] : [])) : []
}

/** Resumes the child (its own repair runs first), runs one turn on what its log holds, and closes it. */
async function continueChild(agents: AgentService, id: string, options: ResumeOptions, signal: AbortSignal): Promise<void> {
  const { agent } = await agents.resume(id, options)
  const cancel = () => agent.cancel('the subagent\'s recovery was cancelled')
  signal.addEventListener('abort', cancel, { once: true })
  try {
    if (!signal.aborted) await agent.continue()
  } finally {
    signal.removeEventListener('abort', cancel)
    await agent.close()
  }
}

async function readAnswer(sessions: SessionService, child: SessionSummary): Promise<SubagentResult | undefined> {
  const { events } = await sessions.load(child.id)
  const answer = completedAnswer(events)
  if (answer === undefined) return undefined
  return { sessionId: child.id, answer, reason: 'completed', usage: child.usage, ...(child.cost === undefined ? {} : { cost: child.cost }) }
}

/** The text of the last assistant message, when the log's last turn ended `completed`. */
function completedAnswer(events: readonly SessionEvent[]): string | undefined {
  const end = events.findLast((event) => event.type === 'turn/end')
  if (!end || eventData(end, 'turn/end').reason !== 'completed') return undefined
  const last = events.findLast((event) => event.type === 'assistant/message' && event.seq < end.seq)
  if (!last) return ''
  return eventData(last, 'assistant/message').message.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('')
}
