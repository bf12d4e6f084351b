/**
 * The whole stack in one process, as the agent's own tests build it: a scripted LLM, tools (nothing
 * asks for approval), sessions in memory, agents, and telemetry; plus a recording sink and tools
 * that spawn subagents or wait for each other.
 */

import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import LlmRuntime, { type AdapterRequest, type ModelInfo } from '@rein/llm'
import SessionService, { MemorySessionStore, type SessionStore } from '@rein/session'
import { checkedAgents, createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { afterEach } from 'vitest'
import TelemetryService, { type RunScope, type TelemetryRecord, type TelemetrySink } from '../src/index.ts'

/** What a test may give the telemetry row. */
export type ConfigInput = Parameters<typeof TelemetryService.Config>[0]

/** Priced so that money equals input tokens + 2 × output tokens, exactly. */
export const PRICED: ModelInfo = { id: 'm', pricing: { input: 1_000_000, output: 2_000_000 } }

const checked = checkedAgents(afterEach)

/**
 * Answers by conversation, whatever order runs interleave in: `turns[task][n]` answers the request
 * whose first user message is `task` and which holds `n` answers already.
 */
export function byTask(turns: Record<string, readonly ScriptedTurn[]>) {
  return (request: AdapterRequest): ScriptedTurn => {
    const first = request.messages.find((message) => message.role === 'user')?.content[0]
    const task = first?.type === 'text' ? first.text : ''
    const answered = request.messages.filter((message) => message.role === 'assistant').length
    const turn = turns[task]?.[answered]
    if (turn === undefined) throw new Error(`no scripted answer ${answered} for task ${JSON.stringify(task)}`)
    return turn
  }
}

/** llm (scripted), tools, sessions, agents and telemetry on one root. */
export async function boot(script: ReturnType<typeof byTask> | readonly ScriptedTurn[], options: { models?: ModelInfo[]; telemetry?: ConfigInput; store?: SessionStore } = {}) {
  const stack = await bootWithoutTelemetry(script, options)
  const telemetry = await stack.root.plugin(TelemetryService, options.telemetry ?? {})
  return { ...stack, telemetry }
}

/** The same stack with telemetry not loaded yet: a test loads it mid-run. `store`: sessions another stack (a killed process) left. */
export async function bootWithoutTelemetry(script: ReturnType<typeof byTask> | readonly ScriptedTurn[], options: { models?: ModelInfo[]; store?: SessionStore } = {}) {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin(SessionService)
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(options.store ?? new MemorySessionStore()) })
  await root.plugin(AgentService, { provider: 'scripted', model: 'm' })
  const llm = createScriptedLlm(script, { models: options.models ?? [PRICED] })
  root.llm.registerAdapter('scripted', llm)
  const create = async (options: Parameters<Context['agents']['create']>[0] = {}) => {
    const agent = await root.agents.create(options)
    checked(agent)
    return agent
  }
  return { root, llm, create }
}

/** A sink that keeps every record it gets. */
export function recorder(name = 'recorder'): TelemetrySink & { records: TelemetryRecord[] } {
  const records: TelemetryRecord[] = []
  return { name, records, emit: (record) => { records.push(record) } }
}

/** The run id the agent's first (or `n`th) turn ran as, from its log. */
export function runIdOf(agent: Agent, n = 1): string {
  const start = agent.session.events.filter((event) => event.type === 'turn/start')[n - 1]
  return (start!.data as { runId: string }).runId
}

/** What a tool body saw of `ctx.telemetry.scope()`, by a label the test chooses. */
export type Seen = Map<string, RunScope | undefined>

/**
 * `spawn {task}`: runs a subagent (a child of the calling run) on `task` and answers its text.
 * Safe beside others, so two spawns in one step run at once. Records the scope before the child
 * starts and after it ends, as `<task>:before` and `<task>:after`.
 */
export function spawnTool(root: Context, seen: Seen, model?: string) {
  return root.tools.register(defineTool({
    name: 'spawn',
    description: 'Runs a subagent on a task.',
    parameters: { task: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    execute: async (args, run) => {
      seen.set(`${args.task}:before`, root.telemetry.scope())
      const child = await root.agents.create({ name: 'helper', ...(model ? { model } : {}), parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      checked(child)
      const { text } = await child.send(args.task)
      seen.set(`${args.task}:after`, root.telemetry.scope())
      return text
    },
  }))
}

/**
 * `meet {key}`: waits until `count` calls are inside their bodies at once, then records the scope
 * after the wait as `key`. Proves calls (and runs) really overlapped.
 */
export function meetTool(root: Context, seen: Seen, count: number) {
  let waiting: (() => void)[] = []
  return root.tools.register(defineTool({
    name: 'meet',
    description: 'Waits for the others.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    execute: async (args) => {
      await new Promise<void>((resolve) => {
        waiting.push(resolve)
        if (waiting.length === count) {
          for (const wake of waiting) wake()
          waiting = []
        }
      })
      // Another turn of the event loop, so the others' continuations ran in between.
      await new Promise((resolve) => setImmediate(resolve))
      seen.set(args.key, root.telemetry.scope())
      return `met ${args.key}`
    },
  }))
}

/** A tool call step of a script. */
export function call(name: string, args: Record<string, unknown>, id: string) {
  return { toolCall: { id, name, arguments: JSON.stringify(args) } }
}

/** A usage step of a script. */
export function usage(inputTokens: number, outputTokens: number) {
  return { usage: { inputTokens, outputTokens } }
}
