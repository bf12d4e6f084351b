/**
 * One delegation: a child agent in its own session, linked to the calling run, sent the prompt
 * once and always closed. In the foreground it is cancelled with the call (a background one:
 * background.ts).
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent, AgentEvent, AgentService, CreateAgentOptions, TurnResult } from '@rein/agent'
import { ReinError, isReinError } from '@rein/base'
import type { JobService } from '@rein/jobs'
import type { LlmRuntime } from '@rein/llm'
import type { ToolRegistry } from '@rein/tools'
import { callerTools, checkCallTools, childTools, unknownNames } from './child-tools.ts'
import type { SubagentProfile, SubagentsConfig } from './config.ts'
import { outcome } from './outcome.ts'
import { childOptions, profileError, profileOf } from './profile.ts'
import { claimChild, resumeClaimed, type ClaimedChild } from './resume.ts'
import type { TreeSlots } from './slots.ts'
import type { SubagentRequest, SubagentResult } from './types.ts'

/** What `run` needs, looked up when used. */
export interface RunDeps {
  ctx: Context
  config: SubagentsConfig
  agents: () => AgentService
  tools: () => ToolRegistry
  /** Children running now: disposing the plugin interrupts them. */
  running: Set<Agent>
  /** Background children's jobs until their bodies return: disposing the plugin waits for them. */
  background: Set<Promise<void>>
  /** `ctx.jobs` when it is composed. */
  jobs: () => JobService | undefined
  /** Which call holds each child session live here, from the moment a `resume` claims it: what `SUBAGENT_BUSY` tells. */
  holders: Map<string, Holder>
  /** Background children per run tree (by its root session's id): what `maxBackground` counts. */
  trees: Map<string, TreeSlots>
}

/** The call a child works for, while it is live in this process. */
export interface Holder {
  readonly callId: string
  /** The call's signal: aborted while the child still runs, it is only stopping. */
  readonly signal: AbortSignal
  readonly background: boolean
  /** The job running it, once started. */
  jobId?: string
}

export async function runSubagent(deps: RunDeps, request: SubagentRequest): Promise<SubagentResult> {
  const { call } = request
  const started = await startChild(deps, request, { callId: call.callId, signal: call.signal, background: false })
  // A parent shut down under its turn (INTERRUPTED) leaves the child interrupted too, not cancelled:
  // its log says it was stopped from outside, and its work can be continued.
  const cancel = () => {
    if (isReinError(call.signal.reason, 'INTERRUPTED')) void started.agent.interrupt()
    else started.agent.cancel('the subagent call was cancelled')
  }
  // Cancelled while the child was being made: a listener added now would never hear it, and a
  // turn not yet started has nothing to cancel.
  if (call.signal.aborted) {
    await started.finish()
    throw new ReinError('ABORTED_BEFORE_DISPATCH', `the subagent call was cancelled before the subagent started (its empty session ${started.agent.session.id} is closed)`)
  }
  call.signal.addEventListener('abort', cancel, { once: true })
  try {
    return started.outcome(await started.agent.send(request.prompt))
  } finally {
    call.signal.removeEventListener('abort', cancel)
    // The child's session is released whatever happened: nothing is left open behind the call.
    await started.finish()
  }
}

/** A child created for a call, relaying its progress, until `finish` closes it. */
export interface StartedChild {
  readonly agent: Agent
  /** The text after the child's last tool calls: its answer so far. */
  streamed(): string
  /** The call's value for the child's turn; one that did not complete throws what it had. */
  outcome(result: TurnResult): SubagentResult
  /** Also hands each event to `listener` (a background job's output). */
  watch(listener: (event: AgentEvent) => void): void
  /** Stops relaying, closes the child's session, and forgets it. */
  finish(): Promise<void>
}

/** A delegation that passed `checkChild`: the profile it names and the child's tools. */
export interface CheckedChild {
  readonly profile: SubagentProfile | undefined
  readonly names: string[] | undefined
  readonly caller: Agent | undefined
  /** The session a `resume` names, already checked and claimed (a background start does it before the cap). */
  readonly claimed?: ClaimedChild
}

/**
 * Checks a delegation (identity, depth, profile, tools, signal) without creating anything: what is
 * wrong with the call itself is said before anything it would count against (`maxBackground`).
 */
export function checkChild(deps: RunDeps, request: SubagentRequest): CheckedChild {
  const { call } = request
  const identity = call.identity
  if (!identity || !call.sessionId) throw new ReinError('NO_RUN_IDENTITY', 'a subagent is started from an agent\'s tool call: this call carries no run identity')
  if (identity.depth >= deps.config.maxDepth) {
    throw new ReinError('SUBAGENT_DEPTH', `subagents nest at most ${deps.config.maxDepth} deep and this run is at depth ${identity.depth}: do the task yourself`, { details: { depth: identity.depth, maxDepth: deps.config.maxDepth } })
  }
  const profile = profileOf(deps.config, request.agent)
  const tools = deps.tools()
  const caller = deps.agents().find(call.sessionId)
  checkCallTools(tools, request.tools, callerTools(tools, caller && ((name) => caller.canUse(name)), identity))
  if (profile?.tools && request.agent !== undefined) {
    const unknown = unknownNames(tools, profile.tools)
    if (unknown.length > 0) throw profileError(request.agent, `its tools name no such tool: ${unknown.join(', ')}`)
  }
  // Both lists were checked: the call's just above, the profile's by the Config schema.
  const names = childTools(tools, [profile?.tools, request.tools])
  if (call.signal.aborted) throw beforeStart()
  return { profile, names, caller }
}

/**
 * Creates the child of a delegation `checkChild` passed (checked now when not given), linked to
 * the call and relaying its events to the parent's listeners: what foreground and background share.
 */
export async function startChild(deps: RunDeps, request: SubagentRequest, holder: Holder, checked: CheckedChild = checkChild(deps, request)): Promise<StartedChild> {
  const { call } = request
  const { profile, names, caller } = checked
  const child = request.resume === undefined
    ? await create(deps, request, profile, names)
    : await resumeClaimed(deps, request, checked.claimed ?? await claimChild(deps, request, request.resume, holder), profile, names)
  deps.running.add(child)
  deps.holders.set(child.session.id, holder)
  // The child's turn starts right after this: its time limit runs from here.
  const limitMs = profile?.timeoutMs ?? deps.config.timeoutMs
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.cancel(`the subagent ran past its limit of ${limitMs} ms`)
  }, limitMs)
  let streamed = ''
  const watchers: ((event: AgentEvent) => void)[] = []
  // The child's progress reaches whoever watches the parent (a UI shows it under this call).
  const unsubscribe = child.subscribe((event) => {
    caller?.relay(call.callId, child.session.id, event)
    if (event.type === 'text-delta') streamed += event.text
    // Text before a step's tool calls is not the answer: keep only what came after the last ones.
    else if (event.type === 'tool-start') streamed = ''
    for (const watcher of watchers) watcher(event)
  })
  let finishing: Promise<void> | undefined
  return {
    agent: child,
    streamed: () => streamed,
    outcome: (result) => outcome(child.session.id, result, streamed, timedOut ? limitMs : undefined),
    watch: (listener) => { watchers.push(listener) },
    finish: () => finishing ??= (async () => {
      clearTimeout(timer)
      unsubscribe()
      try {
        await child.close()
      } finally {
        deps.running.delete(child)
        if (deps.holders.get(child.session.id) === holder) deps.holders.delete(child.session.id)
      }
    })(),
  }
}

async function create(deps: RunDeps, request: SubagentRequest, profile: SubagentProfile | undefined, tools: string[] | undefined): Promise<Agent> {
  const { call } = request
  const agents = deps.agents()
  // The child uses the parent's route unless its profile names another (the agents row's default otherwise).
  const parent = agents.find(call.sessionId!)?.options
  const provider = profile?.provider ?? parent?.provider
  const model = profile?.model ?? parent?.model
  if (request.agent !== undefined && profile?.provider !== undefined && profile.model === undefined && parent !== undefined && profile.provider !== parent.provider) {
    const problem = await inheritedModelProblem(deps, request.agent, profile.provider, parent.model, call.signal)
    // A lookup ended by the cancel found nothing: that is no verdict on the profile.
    if (call.signal.aborted) throw beforeStart()
    if (problem) throw profileError(request.agent, problem)
  }
  const options: CreateAgentOptions = {
    parent: { sessionId: call.sessionId!, runId: call.identity!.runId, callId: call.callId },
    ...childOptions(request.agent, profile, tools),
    ...(provider === undefined ? {} : { provider }),
    ...(model === undefined ? {} : { model }),
  }
  try {
    return await agents.create(options)
  } catch (error) {
    // Only what the profile chose can make it unusable; anything else (a spent budget) is said as it is.
    if (request.agent !== undefined && isReinError(error) && PROFILE_FAULTS.has(error.code)) throw profileError(request.agent, `${error.code}: ${error.message}`, error)
    throw error
  }
}

/**
 * A profile naming another provider than the parent's, and no model, runs the parent's model there:
 * right for two routes to one service, never right when that provider's catalog does not list the
 * model (the load check refuses a profile's own model for the same reason). Found before the child
 * exists, so no session or request is spent on it.
 */
async function inheritedModelProblem(deps: RunDeps, name: string, provider: string, model: string, signal: AbortSignal): Promise<string | undefined> {
  const llm = deps.ctx.get('llm') as LlmRuntime | undefined
  // The catalog may be fetched over the network: the call's cancel ends the wait for it.
  if (!llm || await llm.modelInfo(provider, model, signal)) return undefined
  const listed = llm.listModels(provider).map((info) => info.id)
  if (listed.length === 0) return undefined
  return `it names provider "${provider}" but no model, so its subagent would run your model "${model}", which ${provider}'s model catalog does not list: call subagent without agent "${name}", and tell the user to add profiles.${name}.model (one of: ${listed.join(', ')}) to the @rein/subagents config`
}

function beforeStart(): ReinError {
  return new ReinError('ABORTED_BEFORE_DISPATCH', 'the subagent call was cancelled before the subagent started')
}

/** Codes of `ctx.agents.create` that say a profile's route, model or tools cannot be used. */
const PROFILE_FAULTS = new Set(['NO_MODEL', 'UNKNOWN_PROVIDER', 'UNKNOWN_MODEL', 'INVALID_TOOLS', 'MAX_COST_UNPRICED', 'UNSUPPORTED_REASONING_EFFORT'])
