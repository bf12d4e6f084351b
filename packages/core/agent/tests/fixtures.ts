import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { type ModelInfo, type RetryPolicy } from '@rein/llm'
import SessionService, { MemorySessionStore, type SessionEvent, type SessionStore } from '@rein/session'
import { createScriptedLlm, validateSessionInvariants, type ScriptedLlmScript } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { afterEach, expect } from 'vitest'
import AgentService, { type AgentConfigInput } from '../src/index.ts'

export interface BootOptions {
  agent?: AgentConfigInput
  llm?: { catalogTimeoutMs?: number; retry?: RetryPolicy }
  models?: ModelInfo[]
  store?: SessionStore
}

/** The last handle that wrote to each session in a test; each log is checked against the invariants after it. */
const written = new Map<string, { events: readonly SessionEvent[] }>()
afterEach(() => {
  const sessions = [...written]
  written.clear()
  const problems = sessions.flatMap(([id, session]) => validateSessionInvariants(session.events).map((problem) => `session ${id}: ${problem}`))
  if (problems.length > 0) throw new Error(`session invariants broken:\n${problems.join('\n')}`)
})

/** The whole stack in one process: llm (scripted), tools, sessions (in memory), agents. */
export async function boot(script: ScriptedLlmScript, options: BootOptions = {}) {
  const root = new Context()
  const fibers = {
    llm: await root.plugin(LlmRuntime, { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 }, ...options.llm }),
    tools: await root.plugin(ToolRegistry),
    sessions: await root.plugin(SessionService),
    agents: undefined as unknown as Awaited<ReturnType<Context['plugin']>>,
  }
  const store = options.store ?? new MemorySessionStore()
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
  fibers.agents = await root.plugin(AgentService, { provider: 'scripted', model: 'm', ...options.agent })
  root.on('session/append', (session) => { written.set(session.id, session) })
  const llm = createScriptedLlm(script, { models: options.models ?? [] })
  root.llm.registerAdapter('scripted', llm)
  return { root, llm, store, fibers }
}

/** Fails the test with the violations, if any: every agent test runs this. */
export function expectValidLog(events: readonly SessionEvent[]) {
  expect(validateSessionInvariants(events)).toEqual([])
}

export const types = (events: readonly SessionEvent[]) => events.map((event) => event.type)

/** Tools whose runs the tests can see and steer. */
export function probeTools(root: Context) {
  const log: string[] = []
  let active = 0
  let peak = 0
  const gates = new Map<string, () => void>()
  const waitFor = (key: string) => new Promise<void>((resolve) => gates.set(key, resolve))
  root.tools.register(defineTool({
    name: 'slow_read',
    description: 'Reads; safe to run beside others.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: async (args, run) => {
      active++
      peak = Math.max(peak, active)
      log.push(`start ${args.key}`)
      try {
        if (args.key.startsWith('gate')) await Promise.race([waitFor(args.key), new Promise((_, reject) => run.signal.addEventListener('abort', () => reject(new Error('stopped'))))])
        log.push(`end ${args.key}`)
        return `read ${args.key}`
      } finally {
        active--
      }
    },
  }))
  root.tools.register(defineTool({
    name: 'write',
    description: 'Writes; runs alone.',
    parameters: { text: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: (args) => {
      log.push(`write ${args.text}`)
      return `wrote ${args.text}`
    },
  }))
  return { log, peak: () => peak, open: (key: string) => gates.get(key)?.() }
}

/** `dump`: reads "a big file", 2,000 characters every call; what compaction tests prune. */
export const dumpTool = () => defineTool({
  name: 'dump',
  description: 'Reads a big file.',
  parameters: { path: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, value) => value },
  effects: ['read'],
  execute: () => 'x'.repeat(2_000),
})

/** What a kill -9 leaves of session `id`: its durable events, in a store of their own the killed process never writes to again. */
export async function killed(store: MemorySessionStore, id: string): Promise<MemorySessionStore> {
  const { header, events } = await store.load(id)
  const left = new MemorySessionStore()
  await left.create(header)
  await left.append(id, events)
  await left.close(id)
  return left
}
