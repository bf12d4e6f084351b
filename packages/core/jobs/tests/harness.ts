// The whole stack in one process — scripted llm, tools, sessions in memory, agents, jobs — and a
// `start_job` tool whose jobs the tests finish by hand.
import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import LlmRuntime, { type Message } from '@rein/llm'
import SessionService, { MemorySessionStore, type SessionEvent, type SessionStore } from '@rein/session'
import { createScriptedLlm, validateSessionInvariants, type ScriptedLlmScript } from '@rein/testkit'
import ToolRegistry, { defineTool, type RunIdentity } from '@rein/tools'
import { afterEach, expect } from 'vitest'
import JobService, { type JobRun, type JobsConfig } from '../src/index.ts'

export interface BootOptions {
  store?: SessionStore
  jobs?: Partial<JobsConfig>
}

const fibers: { dispose(): unknown }[] = []
afterEach(async () => {
  // Whatever a test left running ends with it.
  await Promise.all(fibers.splice(0).map((fiber) => fiber.dispose()))
})

export async function boot(script: ScriptedLlmScript, options: BootOptions = {}) {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  // No approval service: ask for nothing, so job_kill (exec) runs.
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin(SessionService)
  const store = options.store ?? new MemorySessionStore()
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
  await root.plugin(AgentService, { provider: 'scripted', model: 'm' })
  const jobs = await root.plugin(JobService, options.jobs ?? {})
  fibers.push(jobs)
  const llm = createScriptedLlm(script)
  root.llm.registerAdapter('scripted', llm)
  return { root, llm, store, jobs }
}

/** The identity a top-level agent's tool calls carry. */
export function ownerOf(agent: Agent): RunIdentity {
  return Object.freeze({ agent: 'main', sessionId: agent.session.id, conversationId: agent.session.id, runId: 'run_test', turnId: `${agent.session.id}/1`, anchor: 'm', depth: 0 })
}

/**
 * Registers `start_job`: each call starts a `test` job labelled with its `label` argument. The
 * job's body is `body`, by default one that waits until the test ends it through `bodies`;
 * `options.outputPath` is passed on as where the job keeps its output.
 */
export function jobStarter(root: Context, body?: (job: JobRun) => void | Promise<void>, options: { outputPath?: string } = {}) {
  const bodies = new Map<string, JobRun>()
  root.tools.register(defineTool({
    name: 'start_job',
    description: 'Starts a test job.',
    parameters: { label: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => `started ${value}` },
    execute: (args, run) => root.jobs.start({
      kind: 'test',
      label: args.label,
      owner: run.identity!,
      signal: run.signal,
      ...options,
      run: body ?? ((job) => {
        bodies.set(job.jobId, job)
        return new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()))
      }),
    }).jobId,
  }))
  return bodies
}

/** A scripted tool call. */
export const call = (name: string, args: object = {}, id?: string) => ({ toolCall: { ...(id ? { id } : {}), name, arguments: JSON.stringify(args) } })

/** The texts of messages plugins injected. */
export const notices = (messages: readonly Message[]) =>
  messages.filter((message) => message.source.kind === 'plugin').map((message) => (message.content[0] as { text: string }).text)

export const ofType = (events: readonly SessionEvent[], type: string) => events.filter((event) => event.type === type).map((event) => event.data as Record<string, unknown>)

export function expectValidLog(events: readonly SessionEvent[]) {
  expect(validateSessionInvariants(events)).toEqual([])
}

/** Resolves after pending callbacks and microtasks ran. */
export const tick = () => new Promise((resolve) => setImmediate(resolve))
