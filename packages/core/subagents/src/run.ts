/**
 * One delegation: a child agent in its own session, linked to the calling run, sent the prompt
 * once and always closed. In the foreground it is cancelled with the call (a background one:
 * background.ts).
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent, AgentEvent, AgentService, CreateAgentOptions, TurnResult } from '@rein/agent'
import { ReinError, isReinError } from '@rein/base'
import type { JobService } from '@rein/jobs'
import type { ToolRegistry } from '@rein/tools'
import { checkCallTools, childTools, unknownNames } from './child-tools.ts'
import type { SubagentProfile, SubagentsConfig } from './config.ts'
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
}

/** The slice of `ctx.telemetry` read here, by name: @rein/subagents does not depend on it. */
interface CostSource {
  cost(runId: string): { total: { money?: number } } | undefined
}

export async function runSubagent(deps: RunDeps, request: SubagentRequest): Promise<SubagentResult> {
  const { call } = request
  const started = await startChild(deps, request)
  // A parent shut down under its turn (INTERRUPTED) leaves the child interrupted too, not cancelled:
  // its log says it was stopped from outside, and its work can be continued.
  const cancel = () => {
    if (isReinError(call.signal.reason, 'INTERRUPTED')) void started.agent.interrupt()
    else started.agent.cancel('the subagent call was cancelled')
  }
  call.signal.addEventListener('abort', cancel, { once: true })
  try {
    return outcome(deps, started, await started.agent.send(request.prompt))
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
  /** Also hands each event to `listener` (a background job's output). */
  watch(listener: (event: AgentEvent) => void): void
  /** Stops relaying, closes the child's session, and forgets it. */
  finish(): Promise<void>
}

/**
 * Checks a delegation (identity, depth, profile, tools, signal) and creates its child, linked to
 * the call and relaying its events to the parent's listeners: what foreground and background share.
 */
export async function startChild(deps: RunDeps, request: SubagentRequest): Promise<StartedChild> {
  const { call } = request
  const identity = call.identity
  if (!identity || !call.sessionId) throw new ReinError('NO_RUN_IDENTITY', 'a subagent is started from an agent\'s tool call: this call carries no run identity')
  if (identity.depth >= deps.config.maxDepth) {
    throw new ReinError('SUBAGENT_DEPTH', `subagents nest at most ${deps.config.maxDepth} deep and this run is at depth ${identity.depth}: do the task yourself`, { details: { depth: identity.depth, maxDepth: deps.config.maxDepth } })
  }
  const profile = profileOf(deps.config, request.agent)
  const tools = deps.tools()
  checkCallTools(tools, request.tools)
  if (profile?.tools) {
    const unknown = unknownNames(tools, profile.tools)
    if (unknown.length > 0) throw profileError(request.agent!, `its tools name no such tool: ${unknown.join(', ')}`)
  }
  let names: string[] | undefined
  try {
    names = childTools(tools, [profile?.tools, request.tools])
  } catch (error) {
    throw new ReinError('INVALID_ARGS', `tools must be tool names or globs, e.g. ["fs_read", "fs_*"]: ${(error as Error).message}`, { cause: error })
  }
  if (call.signal.aborted) throw new ReinError('ABORTED_BEFORE_DISPATCH', 'the subagent call was cancelled before the subagent started')

  const child = await create(deps, request, profile, names)
  deps.running.add(child)
  let streamed = ''
  const watchers: ((event: AgentEvent) => void)[] = []
  // The child's progress reaches whoever watches the parent (a UI shows it under this call).
  const parent = deps.agents().find(call.sessionId)
  const unsubscribe = child.subscribe((event) => {
    parent?.relay(call.callId, child.session.id, event)
    if (event.type === 'text-delta') streamed += event.text
    // Text before a step's tool calls is not the answer: keep only what came after the last ones.
    else if (event.type === 'tool-start') streamed = ''
    for (const watcher of watchers) watcher(event)
  })
  let finishing: Promise<void> | undefined
  return {
    agent: child,
    streamed: () => streamed,
    watch: (listener) => { watchers.push(listener) },
    finish: () => finishing ??= (async () => {
      unsubscribe()
      try {
        await child.close()
      } finally {
        deps.running.delete(child)
      }
    })(),
  }
}

/** The call's value for a completed child; a child that did not complete throws what it had. */
export function outcome(deps: RunDeps, started: StartedChild, result: TurnResult): SubagentResult {
  const sessionId = started.agent.session.id
  if (result.reason !== 'completed') throw unfinished(sessionId, result, started.streamed())
  const cost = costOf(deps.ctx, result)
  return {
    sessionId,
    answer: result.text,
    reason: result.reason,
    usage: result.usage,
    ...(cost === undefined ? {} : { cost }),
  }
}

function profileOf(config: SubagentsConfig, name: string | undefined): SubagentProfile | undefined {
  if (name === undefined) return undefined
  const profile = Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined
  if (!profile) {
    const names = Object.keys(config.profiles)
    throw new ReinError('INVALID_ARGS', `unknown agent "${name}"; ${names.length > 0 ? `the agents are: ${names.join(', ')}` : 'no agent profiles are configured: leave agent out'}`, { details: { agent: name, profiles: names } })
  }
  return profile
}

async function create(deps: RunDeps, request: SubagentRequest, profile: SubagentProfile | undefined, tools: string[] | undefined): Promise<Agent> {
  const { call } = request
  const agents = deps.agents()
  // The child uses the parent's route unless its profile names another (the agents row's default otherwise).
  const parent = agents.find(call.sessionId!)?.options
  const provider = profile?.provider ?? parent?.provider
  const model = profile?.model ?? parent?.model
  const options: CreateAgentOptions = {
    parent: { sessionId: call.sessionId!, runId: call.identity!.runId, callId: call.callId },
    name: request.agent ?? 'subagent',
    ...(provider === undefined ? {} : { provider }),
    ...(model === undefined ? {} : { model }),
    ...(profile?.system === undefined ? {} : { system: profile.system }),
    ...(profile?.maxSteps === undefined ? {} : { maxSteps: profile.maxSteps }),
    ...(profile?.memory === undefined ? {} : { memory: profile.memory }),
    ...(tools === undefined ? {} : { tools }),
  }
  try {
    return await agents.create(options)
  } catch (error) {
    // Only what the profile chose can make it unusable; anything else (a spent budget) is said as it is.
    if (request.agent !== undefined && isReinError(error) && PROFILE_FAULTS.has(error.code)) throw profileError(request.agent, `${error.code}: ${error.message}`, error)
    throw error
  }
}

/** Codes of `ctx.agents.create` that say a profile's route, model or tools cannot be used. */
const PROFILE_FAULTS = new Set(['NO_MODEL', 'UNKNOWN_PROVIDER', 'UNKNOWN_MODEL', 'INVALID_TOOLS', 'MAX_COST_UNPRICED', 'UNSUPPORTED_REASONING_EFFORT'])

function profileError(name: string, problem: string, cause?: unknown): ReinError {
  return new ReinError('SUBAGENT_PROFILE_INVALID', `the subagent profile "${name}" cannot be used: ${problem}`, { details: { agent: name }, ...(cause === undefined ? {} : { cause }) })
}

/** A child that did not complete: an error carrying what it had, so finished work is not thrown away. */
function unfinished(sessionId: string, result: TurnResult, streamed: string): ReinError {
  const partial = streamed.trim() !== '' ? streamed : result.text
  const code = result.reason === 'aborted' ? 'SUBAGENT_CANCELLED' : result.reason === 'interrupted' ? 'SUBAGENT_INTERRUPTED' : 'SUBAGENT_FAILED'
  const why = result.reason === 'aborted' ? 'was cancelled'
    : result.reason === 'interrupted' ? 'was interrupted (rein shut down)'
      : `stopped (${result.reason}${result.error ? `: ${result.error.code} ${result.error.message}` : ''})`
  const had = partial.trim() === '' ? 'It had written nothing yet.' : `What it had so far:\n${partial}`
  return new ReinError(code, `the subagent ${why} (subagent session ${sessionId}). ${had}`, {
    details: { sessionId, reason: result.reason, partial, ...(result.error ? { error: result.error } : {}) },
  })
}

/** The child run's money, its own children included, when telemetry is composed; else its own. */
function costOf(ctx: Context, result: TurnResult): number | undefined {
  const telemetry = ctx.get('telemetry') as CostSource | undefined
  return telemetry?.cost(result.runId)?.total.money ?? result.cost
}
