/**
 * The real stack in one process: a scripted LLM, tools (nothing asks for approval), sessions in
 * memory, agents, the real `ctx.telemetry`, and this plugin exporting to a capture endpoint.
 */

import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import LlmRuntime, { type AdapterRequest, type ModelInfo } from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import TelemetryService from '@rein/telemetry'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { afterEach } from 'vitest'
import { captureLogs, loadOtelHttp, type ConfigInput } from './harness.ts'

const agents: Agent[] = []
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()))
})

/** llm (scripted, retries without delay), tools, sessions, agents, telemetry; then otel-http with `config`. */
export async function bootStack(script: (request: AdapterRequest) => ScriptedTurn, config: ConfigInput, models: ModelInfo[] = []) {
  const root = new Context()
  const logs = captureLogs(root)
  await root.plugin(LlmRuntime, { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin(SessionService)
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(new MemorySessionStore()) })
  await root.plugin(AgentService, { provider: 'scripted', model: 'm', fallbacks: [{ provider: 'scripted', model: 'backup' }] })
  await root.plugin(TelemetryService)
  const llm = createScriptedLlm(script, { models })
  root.llm.registerAdapter('scripted', llm)
  const otel = await loadOtelHttp(root, config)
  const create = async (options: Parameters<Context['agents']['create']>[0] = {}) => {
    const agent = await root.agents.create(options)
    agents.push(agent)
    return agent
  }
  registerTools(root, (agent) => agents.push(agent))
  return { root, llm, otel, create, logs }
}

/**
 * `read {path}` (safe beside others) answers `contents of <path>: RESULT-MARKER`; `spawn {task}`
 * runs a subagent named `helper` as a child of the calling run and answers its text.
 */
function registerTools(root: Context, keep: (agent: Agent) => void) {
  root.tools.register(defineTool({
    name: 'read',
    description: 'Reads a file.',
    parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    execute: (args) => `contents of ${args.path}: RESULT-MARKER`,
  }))
  root.tools.register(defineTool({
    name: 'spawn',
    description: 'Runs a subagent on a task.',
    parameters: { task: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    execute: async (args, run) => {
      const child = await root.agents.create({ name: 'helper', parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      keep(child)
      return (await child.send(args.task)).text
    },
  }))
}

/**
 * Answers by conversation (its first user message) and by how many answers it holds, counting
 * attempts per model: `turns[task][answered][model]` is a list, one turn per attempt.
 */
export function scripted(turns: Record<string, Record<number, Record<string, readonly ScriptedTurn[]>>>) {
  const attempts = new Map<string, number>()
  return (request: AdapterRequest): ScriptedTurn => {
    const first = request.messages.find((message) => message.role === 'user')?.content[0]
    const task = first?.type === 'text' ? first.text : ''
    const answered = request.messages.filter((message) => message.role === 'assistant').length
    const key = `${task}\u0000${answered}\u0000${request.model}`
    const n = attempts.get(key) ?? 0
    attempts.set(key, n + 1)
    const turn = turns[task]?.[answered]?.[request.model]?.[n]
    if (turn === undefined) throw new Error(`no scripted attempt ${n} of ${request.model} for answer ${answered} of ${JSON.stringify(task)}`)
    return turn
  }
}

/** A tool call step of a script. */
export function call(name: string, args: Record<string, unknown>, id: string) {
  return { toolCall: { id, name, arguments: JSON.stringify(args) } }
}
