/**
 * Per-step overhead of @rein/telemetry and @rein/otel-http, and whether a bad OTLP endpoint slows a run.
 *
 * CPU: a 20-step run (each step one model request, answered in process by the scripted LLM, and one
 * trivial tool call) without the service; with an empty listener on each of the eight lifecycle
 * events (what the agent's event dispatch itself costs); with the service and no sink; with a no-op
 * sink (every record built, the run's scope carried into tool bodies); with a sink that also reads
 * every record's content; and with @rein/otel-http exporting to a healthy endpoint, without and
 * with captureContent (the batch's export is flushed inside the measured time).
 * Wall: a whole run (dispose excluded) with otel-http exporting to an endpoint that is down (a
 * closed port), never answers, answers HTTP 500, or answers bytes that are not HTTP, against no
 * telemetry and against a healthy endpoint. A batch holds enough runs for the span processor to
 * export in the middle of it (every 512 spans), so a failing export happens during a measured run.
 * The endpoints live in a child process, so their work is not counted as rein's.
 * The configurations take turns in small batches in one process, so a busy machine's drift falls on
 * all alike; each ratio is taken within a round, then the median over rounds. A sink (otel-http's
 * included) is registered only for its own batches: AsyncLocalStorage, which carries the scope,
 * turns on promise hooks for the whole process while a sink is there (Node 20).
 * Run: pnpm bench (from the repository root), or `pnpm --filter rein-bench exec tsx telemetry.ts`
 * (ROUNDS=10 WALL_ROUNDS=4 for a quicker, noisier run). Ratios are what to compare across machines.
 */

import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import * as otelHttp from '@rein/otel-http'
import TelemetryService, { type TelemetrySink } from '@rein/telemetry'
import { createScriptedLlm } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'


const STEPS = 20
const RUNS_PER_BATCH = 5
const ROUNDS = Number(process.env.ROUNDS ?? 30)
/** 26 runs of 40 spans each: the span processor exports (every 512 spans) twice in the middle of a batch. */
const RUNS_PER_WALL_BATCH = 26
const WALL_ROUNDS = Number(process.env.WALL_ROUNDS ?? 10)
/** otel-http's dispose and export bound here: a dead endpoint holds each batch's (unmeasured) dispose this long. */
const FLUSH_TIMEOUT_MS = 500
const EVENTS = [
  'agent/turn-start', 'agent/turn-end', 'agent/step-start', 'agent/step-end',
  'agent/llm-start', 'agent/llm-end', 'agent/tool-start', 'agent/tool-end',
] as const

/** The endpoints otel-http sends to, each in the child process but `down`. */
type EndpointMode = 'ok' | 'down' | 'never' | 'http500' | 'garbage'

const CPU = {
  off: 'no telemetry',
  listeners: 'no telemetry, 8 empty event listeners',
  loaded: 'telemetry, no sink',
  sink: 'telemetry + no-op sink',
  content: 'telemetry + sink reading content()',
  otel: 'telemetry + otel-http (exports flushed)',
  otelContent: 'same, captureContent',
} as const
type CpuConfig = keyof typeof CPU

const WALL = {
  off: 'no telemetry',
  ok: 'otel-http, healthy endpoint',
  down: 'otel-http, endpoint down (closed port)',
  never: 'otel-http, endpoint never answers',
  http500: 'otel-http, endpoint answers HTTP 500',
  garbage: 'otel-http, endpoint answers non-HTTP bytes',
} as const
type WallConfig = keyof typeof WALL

/** The composition a configuration runs in, and one run of the 20-step task. */
async function stack(telemetry: boolean) {
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
  if (telemetry) await ctx.plugin(TelemetryService)
  // otel-http's warnings (one per failed export kind per load) say whether an export failed mid-batch.
  const warnings = { count: 0 }
  ctx.logger.exporter({ levels: { default: 2 }, export: (message) => { if (message.name === 'otel-http' && message.type === 'warn') warnings.count++ } })
  const agents = ctx.agents
  const run = async () => {
    const agent = await agents.create()
    const result = await agent.send('Look up twenty words, one at a time.')
    if (result.reason !== 'completed') throw new Error(`the run ended ${result.reason}`)
    await agent.close()
  }
  const exportTo = (url: string, captureContent = false): Promise<Fiber> =>
    Promise.resolve(ctx.plugin(otelHttp, { endpoint: url, captureContent, flushTimeoutMs: FLUSH_TIMEOUT_MS }))
  return { ctx, run, exportTo, warnings }
}

/** A batch of one CPU configuration: CPU nanoseconds per step. */
async function cpuBatch(config: CpuConfig, endpoints: Record<EndpointMode, string>) {
  const { ctx, run, exportTo } = await stack(config !== 'off' && config !== 'listeners')
  if (config === 'listeners') for (const name of EVENTS) ctx.on(name, () => {})
  let read = 0
  const sink: TelemetrySink = {
    name: 'bench',
    emit: config === 'content' ? (record) => { if ('content' in record && record.content) read += JSON.stringify(record.content()).length } : () => {},
  }
  return async (): Promise<number> => {
    const dispose = config === 'sink' || config === 'content' ? ctx.telemetry.sink(sink) : undefined
    const otel = config === 'otel' || config === 'otelContent' ? await exportTo(endpoints.ok, config === 'otelContent') : undefined
    const before = process.cpuUsage()
    for (let i = 0; i < RUNS_PER_BATCH; i++) await run()
    // The export's own work (serializing, sending) belongs to the batch that made the spans.
    if (otel) await ctx.telemetry.flush()
    const { user, system } = process.cpuUsage(before)
    await dispose?.()
    await otel?.dispose()
    if (config === 'content' && read === 0) throw new Error('the content sink read nothing')
    return ((user + system) * 1000) / (RUNS_PER_BATCH * STEPS)
  }
}

/** Batches of one wall-time configuration: milliseconds per run, dispose excluded; and in how many an export failed before the last run ended. */
async function wallBatch(config: WallConfig, endpoints: Record<EndpointMode, string>) {
  const { run, exportTo, warnings } = await stack(config !== 'off')
  const failedMidBatch = { count: 0 }
  const batch = async (): Promise<number> => {
    const otel = config === 'off' ? undefined : await exportTo(endpoints[config])
    const warned = warnings.count
    const before = performance.now()
    for (let i = 0; i < RUNS_PER_WALL_BATCH; i++) await run()
    const elapsed = performance.now() - before
    if (warnings.count > warned) failedMidBatch.count++
    await otel?.dispose()
    return elapsed / RUNS_PER_WALL_BATCH
  }
  return { batch, failedMidBatch }
}

/**
 * Starts the endpoints in a child process (it exits when this process closes its stdin) and finds a
 * closed port for `down`.
 */
async function startEndpoints() {
  const source = `
    const http = require('node:http')
    const modes = ['ok', 'never', 'http500', 'garbage']
    const ports = {}
    for (const mode of modes) {
      const server = http.createServer((request, response) => {
        request.resume()
        request.on('end', () => {
          if (mode === 'ok') response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
          else if (mode === 'http500') response.writeHead(500, { 'content-type': 'text/plain' }).end('no')
          else if (mode === 'garbage') request.socket.end('SPLAT nonsense\\r\\n\\r\\n')
        })
      })
      server.listen(0, '127.0.0.1', () => {
        ports[mode] = 'http://127.0.0.1:' + server.address().port
        if (Object.keys(ports).length === modes.length) console.log(JSON.stringify(ports))
      })
    }
    process.stdin.on('end', () => process.exit(0)).resume()`
  const child = spawn(process.execPath, ['-e', source], { stdio: ['pipe', 'pipe', 'inherit'] })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      if (out.includes('\n')) resolve(out.trim())
    })
    child.once('exit', (code) => reject(new Error(`the endpoint process exited (${code})`)))
  })
  const ports = JSON.parse(line) as Record<Exclude<EndpointMode, 'down'>, string>
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  return { endpoints: { ...ports, down: `http://127.0.0.1:${port}` }, stop: () => child.stdin.end() }
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
}

/** Runs every configuration's batch once per round, each round starting with another one. */
async function measure<C extends string>(batches: Map<C, () => Promise<number>>, rounds: number, warmup: number) {
  const names = [...batches.keys()]
  for (const name of names) for (let i = 0; i < warmup; i++) await batches.get(name)!()
  const samples = new Map<C, number[]>(names.map((name) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < names.length; turn++) {
      const name = names[(round + turn) % names.length]!
      samples.get(name)!.push(await batches.get(name)!())
    }
  }
  return samples
}

/** `<median>x (middle half a–b)` of the rounds' ratios of `values` to `base`. */
function ratio(values: readonly number[], base: readonly number[]): string {
  const ratios = values.map((value, round) => value / base[round]!).sort((a, b) => a - b)
  // The middle half of the rounds' ratios: how far to trust the median.
  const spread = `${ratios[Math.floor(ratios.length / 4)]!.toFixed(2)}–${ratios[Math.floor((ratios.length * 3) / 4)]!.toFixed(2)}`
  return `${median(ratios).toFixed(2).padStart(5)}x  (middle half ${spread})`
}

const { endpoints, stop } = await startEndpoints()
try {
  const cpuNames = Object.keys(CPU) as CpuConfig[]
  const cpu = new Map<CpuConfig, () => Promise<number>>()
  for (const name of cpuNames) cpu.set(name, await cpuBatch(name, endpoints))
  const cpuSamples = await measure(cpu, ROUNDS, 3)
  const off = cpuSamples.get('off')!
  console.log(`\ntelemetry: CPU time per step of a ${STEPS}-step run (model request + tool call), ${ROUNDS} rounds`)
  for (const name of cpuNames) {
    const samples = cpuSamples.get(name)!
    console.log(`  ${CPU[name].padEnd(42)} ${(median(samples) / 1000).toFixed(0).padStart(6)} µs/step  ${ratio(samples, off)}`)
  }

  const wallNames = Object.keys(WALL) as WallConfig[]
  const wall = new Map<WallConfig, () => Promise<number>>()
  const failed = new Map<WallConfig, { count: number }>()
  for (const name of wallNames) {
    const { batch, failedMidBatch } = await wallBatch(name, endpoints)
    wall.set(name, batch)
    failed.set(name, failedMidBatch)
  }
  const wallSamples = await measure(wall, WALL_ROUNDS, 1)
  const [wallOff, wallOk] = [wallSamples.get('off')!, wallSamples.get('ok')!]
  console.log(`\notel-http: wall time of a whole ${STEPS}-step run (dispose excluded), ${RUNS_PER_WALL_BATCH} runs a batch, ${WALL_ROUNDS} rounds`)
  console.log(`  ${''.padEnd(42)} ${'ms/run'.padStart(9)}  ${'vs no telemetry'.padEnd(31)}  ${'vs healthy endpoint'.padEnd(31)}  export failed mid-batch`)
  for (const name of wallNames) {
    const samples = wallSamples.get(name)!
    // Warm-up batches count too: the figure says that failures did happen while runs were measured.
    // A `never` export only fails at its timeout (FLUSH_TIMEOUT_MS), after the batch: it hangs meanwhile.
    const mid = name === 'off' || name === 'ok' ? '' : name === 'never' ? 'no (it hangs until its timeout)' : `${failed.get(name)!.count}/${WALL_ROUNDS + 1} batches`
    console.log(`  ${WALL[name].padEnd(42)} ${median(samples).toFixed(2).padStart(9)}  ${ratio(samples, wallOff).padEnd(31)}  ${ratio(samples, wallOk).padEnd(31)}  ${mid}`)
  }
} finally {
  stop()
}
