/**
 * The whole stack in one process: a scripted LLM answering by task, tools (nothing asks for
 * approval), sessions in memory, agents, optionally telemetry, and @rein/subagents.
 */

import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import JobService, { type JobsConfig } from '@rein/jobs'
import LlmRuntime, { type AdapterRequest, type ModelInfo } from '@rein/llm'
import SessionService, { MemorySessionStore, eventData, type SessionEvent } from '@rein/session'
import TelemetryService from '@rein/telemetry'
import { checkedAgents, createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { afterEach } from 'vitest'
import SubagentService, { type SubagentsConfig } from '../src/index.ts'

/** Priced so that money equals input tokens + 2 × output tokens, exactly. */
export const PRICED: ModelInfo = { id: 'm', pricing: { input: 1_000_000, output: 2_000_000 } }

const checked = checkedAgents(afterEach)

/** The first user message's text: which task a request belongs to. */
export function taskOf(request: AdapterRequest): string {
  const first = request.messages.find((message) => message.role === 'user')?.content[0]
  return first?.type === 'text' ? first.text : ''
}

/**
 * Answers by conversation, whatever order runs interleave in: `turns[task][n]` answers the request
 * whose first user message is `task` and which holds `n` answers already.
 */
export function byTask(turns: Record<string, readonly ScriptedTurn[]>) {
  return (request: AdapterRequest): ScriptedTurn => {
    const answered = request.messages.filter((message) => message.role === 'assistant').length
    const turn = turns[taskOf(request)]?.[answered]
    if (turn === undefined) throw new Error(`no scripted answer ${answered} for task ${JSON.stringify(taskOf(request))}`)
    return turn
  }
}

export interface BootOptions {
  subagents?: Partial<SubagentsConfig>
  telemetry?: boolean
  /** Loads @rein/jobs (for run_in_background), with this config. */
  jobs?: Partial<JobsConfig>
  /** The model's context window (none by default: nothing can be compacted). */
  contextWindow?: number
}

/** llm (scripted), tools, sessions, agents, (telemetry,) subagents on one root, plus `lookup` (read) and `save` (write). */
export async function boot(script: ReturnType<typeof byTask>, options: BootOptions = {}) {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin(SessionService)
  const store = new MemorySessionStore()
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
  const agents = await root.plugin(AgentService, { provider: 'scripted', model: 'm' })
  if (options.telemetry) await root.plugin(TelemetryService, {})
  if (options.jobs) await root.plugin(JobService, options.jobs)
  const llm = createScriptedLlm(script, { models: [options.contextWindow === undefined ? PRICED : { ...PRICED, contextWindow: options.contextWindow }] })
  root.llm.registerAdapter('scripted', llm)
  root.tools.register(defineTool({
    name: 'lookup',
    description: 'Looks a word up.',
    parameters: { word: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    execute: (args) => `${args.word}: a word`,
  }))
  root.tools.register(defineTool({
    name: 'save',
    description: 'Saves text.',
    parameters: { text: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['write'],
    execute: () => 'saved',
  }))
  const fiber = await root.plugin(SubagentService, options.subagents ?? {})
  const create = async (createOptions: Parameters<Context['agents']['create']>[0] = {}) => {
    const agent = await root.agents.create(createOptions)
    checked(agent)
    return agent
  }
  return { root, llm, store, fiber, agents, create }
}

/** A tool call step of a script. */
export function call(name: string, args: Record<string, unknown>, id: string) {
  return { toolCall: { id, name, arguments: JSON.stringify(args) } }
}

/** A usage step of a script. */
export function usage(inputTokens: number, outputTokens: number) {
  return { usage: { inputTokens, outputTokens } }
}

/** A session's recorded result of one call. */
export function resultOf(events: readonly SessionEvent[], callId: string) {
  const event = events.find((entry) => entry.type === 'tool/result' && eventData(entry, 'tool/result').callId === callId)
  return event && eventData(event, 'tool/result')
}

/** A recorded result's text. */
export const textOf = (result: ReturnType<typeof resultOf>) => result!.content.map((part) => (part.type === 'text' ? part.text : '')).join('')

/** The child session id a subagent result's text names. */
export function childIdOf(text: string): string {
  const match = /subagent session ([^\s,;)]+)/.exec(text)
  if (!match) throw new Error(`no subagent session in: ${text}`)
  return match[1]!
}

/**
 * `gate {name}`: waits until the test opens that gate (then answers "open") or its call is
 * cancelled. `entered(name)` resolves once a call waits at it.
 */
export function gates(root: Context) {
  const waiting = new Map<string, { entered: Promise<void>; enter: () => void; opened: Promise<void>; open: () => void }>()
  const gate = (name: string) => {
    let entry = waiting.get(name)
    if (!entry) {
      let enter!: () => void
      let open!: () => void
      const entered = new Promise<void>((resolve) => { enter = resolve })
      const opened = new Promise<void>((resolve) => { open = resolve })
      entry = { entered, enter, opened, open }
      waiting.set(name, entry)
    }
    return entry
  }
  root.tools.register(defineTool({
    name: 'gate',
    description: 'Waits.',
    parameters: { name: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    execute: (args, run) => new Promise<string>((resolve, reject) => {
      const entry = gate(args.name)
      entry.enter()
      void entry.opened.then(() => resolve('open'))
      run.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
    }),
  }))
  return { entered: (name: string) => gate(name).entered, open: (name: string) => gate(name).open() }
}
