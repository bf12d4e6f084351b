/**
 * The stack the load suite runs, composed in one process as bench/agent-session.ts does: @rein/llm
 * with @rein/llm-openai against the mock server, @rein/tools with one trivial tool, @rein/session
 * with @rein/session-jsonl under a temp root, and @rein/agent.
 */

import { setImmediate as nextTurn } from 'node:timers/promises'
import { Context } from '@deepseek-ai/cordis'
import AgentService, { type AgentConfig } from '@rein/agent'
import LlmRuntime from '@rein/llm'
import * as openai from '@rein/llm-openai'
import SessionService from '@rein/session'
import * as jsonl from '@rein/session-jsonl'
import ToolRegistry, { defineTool } from '@rein/tools'
import { echoResult } from './script.ts'

/** The model id the stack asks for; the mock server answers whatever is asked. */
const MODEL = 'load-model'

export interface LoadStackOptions {
  /** The mock server's base URL (with `/v1`). */
  baseURL: string
  /** Folder of the session logs. */
  root: string
  /** The model's context window in tokens; absent = unknown (no automatic compaction). */
  contextWindow?: number
  /** Defaults for every agent (the agents row's Config). */
  agent?: Partial<AgentConfig>
}

/** How many `echo` bodies run at once, and the most seen: proof the calls of a step ran in parallel. */
export interface EchoMeter {
  active: number
  peak: number
  /** The most bodies of one session seen running at once. */
  peakInSession: number
  calls: number
  bySession: Map<string, number>
}

/** The composed stack; `dispose` ends it (agents interrupted, sessions closed, locks released). */
export interface LoadStack {
  readonly ctx: Context
  readonly echo: EchoMeter
  dispose(): Promise<void>
}

/** Composes the stack; the `echo` tool answers with its arguments and the session it ran for. */
export async function loadStack(options: LoadStackOptions): Promise<LoadStack> {
  const ctx = new Context()
  // No retries: a failed request is a figure here, not something to hide.
  await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
  await ctx.plugin(openai, {
    provider: 'mock', baseURL: options.baseURL, apiKeyEnv: false,
    models: [{ id: MODEL, ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}) }],
  })
  await ctx.plugin(ToolRegistry, {})
  await ctx.plugin(SessionService)
  await ctx.plugin(jsonl, { root: options.root })
  await ctx.plugin(AgentService, { provider: 'mock', model: MODEL, ...options.agent })
  const echo: EchoMeter = { active: 0, peak: 0, peakInSession: 0, calls: 0, bySession: new Map() }
  ctx.tools.register(defineTool({
    name: 'echo',
    description: 'Answers with its arguments.',
    parameters: { token: { type: 'string', required: true }, turn: { type: 'number', required: true }, n: { type: 'number', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: async (args, run) => {
      const session = run.sessionId ?? '?'
      echo.calls++
      echo.active++
      echo.peak = Math.max(echo.peak, echo.active)
      const mine = (echo.bySession.get(session) ?? 0) + 1
      echo.bySession.set(session, mine)
      echo.peakInSession = Math.max(echo.peakInSession, mine)
      try {
        // Yield once so the calls of a step (and of other agents) overlap instead of running back to back.
        await nextTurn()
        return echoResult(args.token, args.turn, args.n, session)
      } finally {
        echo.active--
        echo.bySession.set(session, echo.bySession.get(session)! - 1)
      }
    },
  }))
  return { ctx, echo, dispose: () => ctx.fiber.dispose() as Promise<void> }
}
