/**
 * The part every command that talks to a model shares: load the composition, install approval and
 * signal handling, get an agent (new or resumed), and turn the outcome into an exit code.
 */

import type { Context } from '@deepseek-ai/cordis'
import type { Agent, CreateAgentOptions, ResumeReport, TurnResult } from '@rein/agent'
import type { ApprovalService } from '@rein/tools'
import type { CliOptions } from './args.ts'
import { loadCliComposition, requireServices } from './composition.ts'
import { EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'
import { colorsEnabled, Renderer } from './render.ts'

export interface SessionScope {
  ctx: Context
  renderer: Renderer
  io: Io
  options: CliOptions
}

/** Loads the composition, runs `body`, and always disposes everything. */
export async function withComposition(options: CliOptions, io: Io, body: (scope: SessionScope) => Promise<number>, prepare?: (ctx: Context) => Promise<void>): Promise<number> {
  const { composition, source } = await loadCliComposition({ ...(options.config ? { config: options.config } : {}), cwd: io.cwd, env: io.env })
  try {
    requireServices(composition, source)
    await prepare?.(composition.ctx)
    const renderer = new Renderer(io, options.json, colorsEnabled(io.stdout, io.env))
    return await body({ ctx: composition.ctx, renderer, io, options })
  } finally {
    await composition.dispose()
  }
}

/** Flags that shape an agent. */
function agentOverrides(options: CliOptions, cwd: string): CreateAgentOptions {
  return {
    cwd,
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.system ? { system: options.system } : {}),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
    ...(options.maxCost ? { maxCost: options.maxCost } : {}),
  }
}

/** A new agent, or the stored session's (repaired if it ended mid-turn). */
export async function openAgent(scope: SessionScope, sessionId: string | undefined): Promise<{ agent: Agent; repaired?: ResumeReport }> {
  const overrides = agentOverrides(scope.options, scope.io.cwd)
  if (!sessionId) return { agent: await scope.ctx.agents.create(overrides) }
  const { cwd: _cwd, ...rest } = overrides
  const { agent, repaired } = await scope.ctx.agents.resume(sessionId, rest)
  reportRepair(scope.renderer, sessionId, repaired)
  return { agent, repaired }
}

function reportRepair(renderer: Renderer, id: string, repaired: ResumeReport) {
  if (repaired.closedTurn === undefined) return
  renderer.notice(`session ${id} had stopped mid-turn (turn ${repaired.closedTurn}); repaired:`, { type: 'repaired', ...repaired })
  for (const call of repaired.rerun) renderer.notice(`  ran ${call.name} (${call.callId}) again: it is safe to repeat`)
  for (const call of repaired.paired) renderer.notice(`  ${call.name} (${call.callId}): ${call.code === 'TOOL_NOT_STARTED' ? 'had not started' : 'outcome unknown; the model is told to check'}`)
}

/** Approval for tools that ask: `--yes` allows; otherwise `ask` decides (or everything is denied). */
export function installApproval(ctx: Context, yes: boolean, ask?: ApprovalService['request']) {
  const service: ApprovalService = { request: (request) => (yes ? 'allow' : ask ? ask(request) : 'deny') }
  ctx.provide('approval', service)
}

/** Streams one turn to the terminal (or as JSON lines) with signal handling; returns the exit code. */
export async function streamTurn(io: Io, renderer: Renderer, agent: Agent, start: (agent: Agent) => Promise<TurnResult>): Promise<number> {
  const unsubscribe = agent.subscribe((event) => renderer.event(event))
  const release = cancelOnSignal(io, agent, renderer)
  try {
    const result = await start(agent)
    renderer.result(result)
    return exitFor(result)
  } finally {
    release()
    unsubscribe()
  }
}

/** First SIGINT/SIGTERM cancels the turn (calls get paired, the log saved); a second exits at once. */
function cancelOnSignal(io: Io, agent: Agent, renderer: Renderer): () => void {
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) process.exit(EXIT.interrupted)
    signalled = true
    renderer.notice(`${signal}: cancelling; press Ctrl-C again to quit without waiting`)
    agent.cancel(signal)
  }
  io.signals.on('SIGINT', onSignal)
  io.signals.on('SIGTERM', onSignal)
  return () => {
    io.signals.off('SIGINT', onSignal)
    io.signals.off('SIGTERM', onSignal)
  }
}

export function exitFor(result: TurnResult): number {
  switch (result.reason) {
    case 'completed':
      return EXIT.ok
    case 'budget':
      return EXIT.budget
    case 'aborted':
    case 'interrupted':
      return EXIT.interrupted
    default:
      return EXIT.error
  }
}
