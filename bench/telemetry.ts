/**
 * Per-step overhead of @rein/telemetry: a 20-step run (each step one model request, answered in
 * process by the scripted LLM, and one trivial tool call) without the service; with an empty
 * listener on each of the eight lifecycle events (what the agent's event dispatch itself costs);
 * with the service and no sink; with a no-op sink (every record built, the run's scope carried into
 * tool bodies); and with a sink that also reads every record's content.
 * The configurations take turns in small batches in one process, so a busy machine's drift falls on
 * all alike; each ratio is taken within a round, then the median over rounds. A sink is registered
 * only for its own batches: AsyncLocalStorage, which carries the scope, turns on promise hooks for
 * the whole process while a sink is there (Node 20), and off again when the last one goes.
 * Run: pnpm bench (from the repository root), or `pnpm --filter rein-bench exec tsx telemetry.ts`
 * (ROUNDS=10 for a quicker, noisier run). Ratios are what to compare across machines.
 */

import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import TelemetryService, { type TelemetrySink } from '@rein/telemetry'
import { createScriptedLlm } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'

const STEPS = 20
const RUNS_PER_BATCH = 5
const ROUNDS = Number(process.env.ROUNDS ?? 40)
const EVENTS = [
  'agent/turn-start', 'agent/turn-end', 'agent/step-start', 'agent/step-end',
  'agent/llm-start', 'agent/llm-end', 'agent/tool-start', 'agent/tool-end',
] as const
const CONFIGS = {
  off: 'no telemetry',
  listeners: 'no telemetry, 8 empty event listeners',
  loaded: 'telemetry, no sink',
  sink: 'telemetry + no-op sink',
  content: 'telemetry + sink reading content()',
} as const
type Config = keyof typeof CONFIGS

async function stack(config: Config) {
  const ctx = new Context()
  await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
  await ctx.plugin(ToolRegistry, { askFor: [] })
  await ctx.plugin(SessionService)
  ctx.sessions.registerStore(new MemorySessionStore())
  await ctx.plugin(AgentService, { provider: 'scripted', model: 'm', maxSteps: STEPS + 5 })
  // Answers by the request's length, so every run gets the same 20 steps.
  ctx.llm.registerAdapter('scripted', createScriptedLlm((request) => {
    const step = request.messages.filter((message) => message.role === 'assistant').length
    return step < STEPS - 1
      ? [{ toolCall: { id: `c${step}`, name: 'lookup', arguments: `{"word":"w${step}"}` } }, { usage: { inputTokens: 100, outputTokens: 10 } }]
      : [{ text: 'done' }, { usage: { inputTokens: 100, outputTokens: 10 } }]
  }, { models: [{ id: 'm', pricing: { input: 1, output: 2 } }] }))
  ctx.tools.register(defineTool({
    name: 'lookup', description: 'Looks a word up.', parameters: { word: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: (args) => `${args.word}: a word`,
  }))
  if (config === 'listeners') for (const name of EVENTS) ctx.on(name, () => {})
  if (config === 'loaded' || config === 'sink' || config === 'content') await ctx.plugin(TelemetryService)
  let read = 0
  const sink: TelemetrySink = {
    name: 'bench',
    emit: config === 'content' ? (record) => { if ('content' in record && record.content) read += JSON.stringify(record.content()).length } : () => {},
  }
  const agents = ctx.agents
  const run = async () => {
    const agent = await agents.create()
    const result = await agent.send('Look up twenty words, one at a time.')
    if (result.reason !== 'completed') throw new Error(`the run ended ${result.reason}`)
    await agent.close()
  }
  /** CPU nanoseconds per step over one batch. */
  return async (): Promise<number> => {
    const dispose = config === 'sink' || config === 'content' ? ctx.telemetry.sink(sink) : undefined
    const before = process.cpuUsage()
    for (let i = 0; i < RUNS_PER_BATCH; i++) await run()
    const { user, system } = process.cpuUsage(before)
    await dispose?.()
    if (config === 'content' && read === 0) throw new Error('the content sink read nothing')
    return ((user + system) * 1000) / (RUNS_PER_BATCH * STEPS)
  }
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
}

const names = Object.keys(CONFIGS) as Config[]
const batches = new Map<Config, () => Promise<number>>()
for (const name of names) batches.set(name, await stack(name))
for (const name of names) for (let i = 0; i < 4; i++) await batches.get(name)!()
const samples = new Map<Config, number[]>(names.map((name) => [name, []]))
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts with another configuration, so none always runs first or last.
  for (let turn = 0; turn < names.length; turn++) {
    const name = names[(round + turn) % names.length]!
    samples.get(name)!.push(await batches.get(name)!())
  }
}
const off = samples.get('off')!
console.log(`\ntelemetry: CPU time per step of a ${STEPS}-step run (model request + tool call), ${ROUNDS} rounds`)
for (const name of names) {
  const ratios = samples.get(name)!.map((value, round) => value / off[round]!).sort((a, b) => a - b)
  // The middle half of the rounds' ratios: how far to trust the median.
  const spread = `${ratios[Math.floor(ratios.length / 4)]!.toFixed(2)}–${ratios[Math.floor((ratios.length * 3) / 4)]!.toFixed(2)}`
  console.log(`  ${CONFIGS[name].padEnd(40)} ${(median(samples.get(name)!) / 1000).toFixed(0).padStart(6)} µs/step  ${median(ratios).toFixed(2).padStart(5)}x  (middle half ${spread})`)
}
