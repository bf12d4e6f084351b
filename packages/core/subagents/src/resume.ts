/**
 * `resume`: a call continues one of its caller's earlier subagents — one that was cancelled,
 * interrupted or failed, or one asked a follow-up — in its own session, with the prompt as its next
 * message. Only the calling session's own children, only when no process runs them, and never with
 * more tools than the child's last request was offered.
 */

import { recordedTools, type Agent, type CreateAgentOptions } from '@rein/agent'
import { ReinError, isReinError } from '@rein/base'
import type { SessionEvent, SessionService } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import { childTools } from './child-tools.ts'
import type { SubagentProfile, SubagentsConfig } from './config.ts'
import { childOptions, profileOf } from './profile.ts'
import type { Holder, RunDeps } from './run.ts'
import type { SubagentRequest } from './types.ts'

/** A `resume` target checked (the caller's child, not running) and claimed by a call, before anything is counted or opened. */
export interface ClaimedChild {
  readonly id: string
  readonly events: readonly SessionEvent[]
  /** Gives the claim up (the call was refused after all); nothing once another holder took it. */
  release(): void
}

/**
 * Checks the session `id` a call names to resume — it exists, its header names the calling session
 * as its parent, nothing runs it — and claims it for `holder`: what is wrong with what the call
 * names is said before anything it would count against (`maxBackground`).
 */
export async function claimChild(deps: RunDeps, request: SubagentRequest, id: string, holder: Holder): Promise<ClaimedChild> {
  const sessions = deps.ctx.get('sessions') as SessionService | undefined
  if (!sessions) throw new ReinError('SERVICE_MISSING', 'resume needs ctx.sessions: add a @rein/session row (and a store) to cordis.yml')
  const { header, events } = await loadChild(sessions, id)
  if (header.parentSessionId !== request.call.sessionId) {
    throw new ReinError('INVALID_ARGS', `session ${id} is not one of your subagents: resume continues only a subagent this session started (its id is in that call's result or error)`, { details: { sessionId: id } })
  }
  // Claimed with no await between the look and the claim: of two calls in one answer (run side by
  // side), the second finds the first's claim, not a half-opened session.
  const held = deps.holders.get(id)
  if (held) throw busy(id, held)
  if (deps.agents().find(id)) throw busy(id)
  deps.holders.set(id, holder)
  const release = () => {
    if (deps.holders.get(id) === holder) deps.holders.delete(id)
  }
  return { id, events, release }
}

/** The claimed child opened as an agent (its own repair done), ready for the prompt. */
export async function resumeClaimed(deps: RunDeps, request: SubagentRequest, claimed: ClaimedChild, profile: SubagentProfile | undefined, tools: string[] | undefined): Promise<Agent> {
  const { call } = request
  const parent = { sessionId: call.sessionId!, runId: call.identity!.runId, callId: call.callId }
  try {
    const { agent } = await deps.agents().resume(claimed.id, { ...childOptions(request.agent, profile, withinRecorded(tools, recordedTools(claimed.events))), parent, signal: call.signal })
    return agent
  } catch (error) {
    claimed.release()
    // Another process holds it.
    if (isReinError(error, 'SESSION_LOCKED')) throw busy(claimed.id, undefined, error)
    throw error
  }
}

/** `SUBAGENT_BUSY`, saying what holds the child (`held`: a call here) and what the model can do meanwhile. */
function busy(id: string, held?: Holder, cause?: unknown): ReinError {
  const options = { details: { sessionId: id, ...(held ? { heldBy: held.callId } : {}) }, ...(cause === undefined ? {} : { cause }) }
  return new ReinError('SUBAGENT_BUSY', `subagent session ${id} ${busyReason(held)}`, options)
}

function busyReason(held: Holder | undefined): string {
  if (held?.background) return `is running in the background${held.jobId === undefined ? '' : ` as job ${held.jobId}`}, so it cannot be resumed now: wait for its notice (job_output with wait_ms waits for it), or job_kill it, then resume it`
  // A foreground call holds its child until its result: one still running is a call of this same
  // answer (calls of one answer run side by side); one whose call was cancelled is still stopping.
  if (held?.signal.aborted) return `is still stopping after call ${held.callId} was cancelled: resume it again in a moment`
  if (held) return `is being resumed by another call of yours in this same answer (${held.callId}), and a subagent works on one prompt at a time: wait for that call's result, then resume it in a later answer with what this call asked (or ask for both in one prompt)`
  return 'is running in another process (or is open here outside a subagent call), so it cannot be resumed now: resume it once that ends'
}

async function loadChild(sessions: SessionService, id: string) {
  try {
    return await sessions.load(id)
  } catch (error) {
    if (!isReinError(error, 'SESSION_NOT_FOUND')) throw error
    throw new ReinError('INVALID_ARGS', `no subagent session "${id}": resume takes the session id a subagent call's result or error gave`, { cause: error, details: { sessionId: id } })
  }
}

/**
 * The options a child is resumed with, as its making call had it made: the profile the call named
 * and the tools the profile and the call allowed, never one its requests were not offered
 * (`recorded`). Throws for a profile gone from Config or a malformed list.
 */
export function callOptions(config: SubagentsConfig, tools: ToolRegistry, args: { agent?: string; tools?: readonly string[] }, recorded: readonly string[]): CreateAgentOptions {
  const profile = profileOf(config, args.agent)
  return childOptions(args.agent, profile, withinRecorded(childTools(tools, [profile?.tools, args.tools]), recorded))
}

/** `names` kept to what the child was offered before (`recorded`); every recorded name when `names` says nothing. */
function withinRecorded(names: readonly string[] | undefined, recorded: readonly string[] | undefined): string[] | undefined {
  if (recorded === undefined) return names === undefined ? undefined : [...names]
  return names === undefined ? [...recorded] : names.filter((name) => recorded.includes(name))
}

