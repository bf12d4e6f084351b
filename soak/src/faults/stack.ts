/**
 * One agent over real HTTP: `@rein/llm` (short retries, short idle limit) with both OpenAI-wire
 * adapters pointed at the mock server, `@rein/tools` with one harmless tool, and `@rein/session`
 * on a JSONL store in a fresh temporary folder. Built per case, so no cool-down, lock or log
 * carries from one case to the next; only the server (and fetch's idle connections to it) stays.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import LlmRuntime from '@rein/llm'
import * as deepseek from '@rein/llm-deepseek'
import * as openai from '@rein/llm-openai'
import SessionService from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import type { MockScript, MockServer } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'

/** The two adapters under test, by the route each serves. */
export type AdapterRoute = 'openai' | 'deepseek'

/** Timing knobs shared by the stack and the oracle that predicts it. */
export interface StackTiming {
  maxRetries: number
  initialDelayMs: number
  maxDelayMs: number
  retryAfterCapMs: number
  /** The adapters' `streamIdleTimeoutMs`: how long a stall lasts before `TIMEOUT`. */
  idleMs: number
}

const PRIMARY_MODEL = 'primary-model'
export const FALLBACK_MODEL = 'fallback-model'

export interface StackOptions {
  primary: AdapterRoute
  /** The fallback route is the other adapter's, with its own model. */
  fallback: boolean
  timing: StackTiming
  /**
   * The suite's one mock server, reset to `script` for this stack: one address for every case, so
   * fetch's per-origin connection pool does not grow by a pool per case (which would read as a leak).
   */
  server: MockServer
  script: MockScript
  /** Cool-down after a failover; the oracle models it. */
  fallbackCooldownMs?: number
}

export interface Stack {
  root: Context
  store: JsonlSessionStore
  folder: string
  agent: Agent
  /** Closes the agent (with a guard: a hung close is abandoned) and the composition; removes the folder. */
  close(): Promise<void>
}

export function otherRoute(route: AdapterRoute): AdapterRoute {
  return route === 'openai' ? 'deepseek' : 'openai'
}

/** Boots the stack and creates one agent on a new session. */
export async function bootStack(options: StackOptions): Promise<Stack> {
  const { timing } = options
  const folder = mkdtempSync(join(tmpdir(), 'rein-soak-faults-'))
  const { server } = options
  server.reset(options.script)
  const root = new Context()
  try {
    await root.plugin(LlmRuntime, {
      retry: { maxRetries: timing.maxRetries, initialDelayMs: timing.initialDelayMs, maxDelayMs: timing.maxDelayMs, jitter: 0, retryAfterCapMs: timing.retryAfterCapMs },
      fallbackCooldownMs: options.fallbackCooldownMs ?? 300_000,
    })
    await root.plugin(ToolRegistry)
    await root.plugin(SessionService)
    const store = new JsonlSessionStore({ root: join(folder, 'sessions') })
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
    const common = { baseURL: server.url, apiKeyEnv: false as const, streamIdleTimeoutMs: timing.idleMs }
    await root.plugin(openai, { ...common, label: 'OpenAI' })
    await root.plugin(deepseek, { ...common, label: 'DeepSeek' })
    root.tools.register(defineTool({
      name: 'note',
      description: 'Writes down a note.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      isConcurrencySafe: true,
      replaySafe: true,
      execute: (args) => `noted ${args.text}`,
    }))
    await root.plugin(AgentService, {
      provider: options.primary,
      model: PRIMARY_MODEL,
      fallbacks: options.fallback ? [{ provider: otherRoute(options.primary), model: FALLBACK_MODEL }] : [],
      maxSteps: 8,
      // A refusal for length ends the turn (the llm's documented outcome) instead of compacting
      // and asking again; the schema fills in the other compaction keys.
      compaction: { mode: 'off' } as never,
    })
    const agent = await root.agents.create({ cwd: folder })
    let closed = false
    return {
      root, store, folder, agent,
      async close() {
        if (closed) return
        closed = true
        try {
          await guard(agent.close(), 5_000)
          await guard(root.fiber.dispose(), 5_000)
        } finally {
          rmSync(folder, { recursive: true, force: true })
        }
      },
    }
  } catch (error) {
    await root.fiber.dispose().catch(() => {})
    rmSync(folder, { recursive: true, force: true })
    throw error
  }
}

/** `promise`, or give up on it after `ms` (its result is then ignored). */
async function guard(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([promise.then(() => {}, () => {}), new Promise<void>((resolve) => { timer = setTimeout(resolve, ms) })])
  } finally {
    clearTimeout(timer)
  }
}
