// @ts-check
/**
 * The loop benchmark's runner (`pnpm bench`): every harness (the floor, rein's variants, the peers in
 * bench/peers) against the same mock server, each run its own process, runs interleaved over
 * repetitions, medians; then resume, cold start and tool-call overhead from the micro benchmarks;
 * then a markdown report on stdout and in docs/benchmarks.md (rewritten whole each run).
 *
 *   node bench/loop/run.mjs [--quick] [--only rein,pi,…] [--turns N] [--reps N] [--warmup N] [--no-extras] [--no-write]
 *
 * Environment: TURNS, REPS, WARMUP, ONLY (same as the flags), RUN_TIMEOUT_MS (per process, default 10 min).
 * `--warmup` (default 10) sets the unmeasured turns each process runs first: a large one (1 000) shows
 * the steady state, once the JIT has compiled every harness's hot code.
 * Progress goes to stderr, the report to stdout. The runner itself serves the mock model and an OTLP
 * capture endpoint, so its own work is never counted against a harness (each harness measures its
 * own CPU with process.cpuUsage).
 */

import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import os from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measuredCommit } from '../../scripts/measured-commit.mjs'
import { renderReport } from './report.mjs'
import { TRACE_FLAGS, parseCompilerTrace } from './compiler.mjs'
import { startMockServer } from './server.mjs'

const bench = fileURLToPath(new URL('..', import.meta.url))
const repo = fileURLToPath(new URL('../..', import.meta.url))
const peers = join(bench, 'peers')
const docsFile = join(repo, 'docs', 'benchmarks.md')
const MiB = 1024 * 1024

/** @typedef {'A' | 'B' | 'C'} Scenario */
/** @type {Scenario[]} */
const SCENARIOS = ['A', 'B', 'C']
const CALLS = { A: 1, B: 1, C: 3 }

/** The peers' pinned versions, for their labels. */
const pinned = /** @type {Record<string, string>} */ (readJson(join(peers, 'package.json'))?.dependencies ?? {})
const at = (/** @type {string} */ name) => `${name}${pinned[name] ? ` ${pinned[name]}` : ''}`

/** V8's budget for the code it inlines into one optimized function, cut from 920 bytes of bytecode to 100. */
const INLINING_LIMITED = '--max-inlined-bytecode-size-cumulative=100'

/**
 * @typedef {{ id: string, label: string, file: string, variant?: string, peer?: boolean, layer?: boolean, nodeFlags?: string[] }} Harness
 * @type {Harness[]}
 */
const HARNESSES = [
  { id: 'floor', label: 'floor (fetch + eventsource-parser + direct call)', file: join(bench, 'loop', 'floor.mjs') },
  { id: 'floor-http', label: 'floor over node:http (informational)', file: join(bench, 'loop', 'floor-http.mjs') },
  { id: 'floor-durable', label: 'floor keeping a log fsynced where rein does (informational)', file: join(bench, 'loop', 'floor.mjs'), variant: 'durable' },
  { id: 'rein', label: 'rein (session-jsonl + telemetry)', file: join(bench, 'loop', 'rein.mjs'), variant: 'durable' },
  { id: 'rein-memory', label: 'rein (in-memory, no telemetry)', file: join(bench, 'loop', 'rein.mjs'), variant: 'memory' },
  { id: 'rein-jsonl', label: 'rein layer: session-jsonl, no telemetry', file: join(bench, 'loop', 'rein.mjs'), variant: 'jsonl', layer: true },
  { id: 'rein-telemetry', label: 'rein layer: telemetry, in-memory session', file: join(bench, 'loop', 'rein.mjs'), variant: 'telemetry', layer: true },
  // The same two with V8's optimizing compiler off: what is left when no hot function is compiled in the window.
  { id: 'floor-noopt', label: 'floor, optimizing compiler off (informational)', file: join(bench, 'loop', 'floor.mjs'), nodeFlags: ['--no-opt'] },
  { id: 'rein-noopt', label: 'rein (session-jsonl + telemetry), optimizing compiler off (informational)', file: join(bench, 'loop', 'rein.mjs'), variant: 'durable', nodeFlags: ['--no-opt'] },
  // And with the compiler on but inlining little into what it compiles: how much of that work is inlining.
  { id: 'floor-inline', label: 'floor, inlining limited (informational)', file: join(bench, 'loop', 'floor.mjs'), nodeFlags: [INLINING_LIMITED] },
  { id: 'rein-inline', label: 'rein (session-jsonl + telemetry), inlining limited (informational)', file: join(bench, 'loop', 'rein.mjs'), variant: 'durable', nodeFlags: [INLINING_LIMITED] },
  { id: 'openai', label: `openai SDK loop (${at('openai')})`, file: join(peers, 'openai.mjs'), peer: true },
  { id: 'pi', label: `pi (${at('@earendil-works/pi-agent-core')})`, file: join(peers, 'pi.mjs'), peer: true },
  { id: 'ai-sdk', label: `AI SDK (${at('ai')})`, file: join(peers, 'ai-sdk.mjs'), peer: true },
  { id: 'agents', label: `Agents JS (${at('@openai/agents')})`, file: join(peers, 'agents.mjs'), peer: true },
  { id: 'mastra', label: `Mastra (${at('@mastra/core')})`, file: join(peers, 'mastra.mjs'), peer: true },
  { id: 'langgraph', label: `LangGraph (${at('@langchain/langgraph')})`, file: join(peers, 'langgraph.mjs'), peer: true },
]

/** The micro benchmarks whose figures the report quotes, run with BENCH_JSON=1. */
const EXTRAS = [
  { id: 'resume', script: 'agent-session.ts' },
  { id: 'cli', script: 'cli-startup.ts' },
  { id: 'tools', script: 'tools-overhead.ts' },
  { id: 'stream', script: 'llm-parse.ts' },
]

function readJson(/** @type {string} */ file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return undefined
  }
}

function usage(/** @type {string} */ problem) {
  process.stderr.write(`${problem}\nusage: node bench/loop/run.mjs [--quick] [--only ${HARNESSES.map((h) => h.id).join(',')}] [--turns N] [--reps N] [--warmup N] [--no-extras] [--no-write]\n`)
  process.exit(2)
}

function options() {
  const argv = process.argv.slice(2)
  const flag = (/** @type {string} */ name) => {
    const i = argv.indexOf(name)
    if (i < 0) return undefined
    const value = argv[i + 1]
    if (value === undefined || value.startsWith('--')) usage(`${name} needs a value`)
    return value
  }
  const known = new Set(['--quick', '--only', '--turns', '--reps', '--warmup', '--no-extras', '--no-write', '--help'])
  for (const [i, arg] of argv.entries()) {
    if (arg.startsWith('--') && !known.has(arg)) usage(`unknown option ${arg}`)
    if (!arg.startsWith('--') && !['--only', '--turns', '--reps', '--warmup'].includes(argv[i - 1] ?? '')) usage(`unexpected argument ${arg}`)
  }
  if (argv.includes('--help')) usage('runs the loop benchmark and writes docs/benchmarks.md')
  const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1'
  const number = (/** @type {string | undefined} */ value, /** @type {number} */ fallback, /** @type {string} */ name) => {
    if (value === undefined || value === '') return fallback
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1) usage(`${name} must be a positive integer, not ${value}`)
    return n
  }
  const turns = number(flag('--turns') ?? process.env.TURNS, quick ? 50 : 200, 'turns')
  const reps = number(flag('--reps') ?? process.env.REPS, quick ? 1 : 5, 'reps')
  // The unmeasured turns every harness runs first (two requests each): common.mjs reads them from REIN_BENCH_WARMUP.
  const warmup = number(flag('--warmup') ?? process.env.WARMUP, 10, 'warmup')
  const only = (flag('--only') ?? process.env.ONLY ?? '').split(',').map((id) => id.trim()).filter(Boolean)
  const unknown = only.filter((id) => !HARNESSES.some((h) => h.id === id))
  if (unknown.length > 0) usage(`unknown harness ${unknown.join(', ')}`)
  // The floor is every ratio's denominator, so it always runs.
  const selected = HARNESSES.filter((h) => only.length === 0 || h.id === 'floor' || only.includes(h.id))
  const extras = !argv.includes('--no-extras') && process.env.BENCH_EXTRAS !== '0'
  return { quick, turns, reps, warmup, only, selected, extras, write: !argv.includes('--no-write') }
}

/** `npm ci` in bench/peers when node_modules is missing or older than the lockfile. */
function ensurePeers() {
  const lock = join(peers, 'package-lock.json')
  const marker = join(peers, 'node_modules', '.package-lock.json')
  if (existsSync(marker) && existsSync(lock) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return undefined
  process.stderr.write('installing the peer harnesses: npm ci in bench/peers (npm warns EBADENGINE about some packages\' `engines` field on Node 20; that is expected, the pinned versions run here)\n')
  const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: peers, stdio: ['ignore', 'inherit', 'inherit'], shell: process.platform === 'win32' })
  if (npm.status === 0) return undefined
  return `npm ci in bench/peers failed (${npm.error ? String(npm.error) : `exit ${String(npm.status)}`})`
}

/** A local OTLP/HTTP endpoint: HTTP 200 `{}` to every POST, counting the bytes it receives. */
async function startCapture() {
  const capture = { url: '', bytes: 0, posts: 0, close: () => Promise.resolve() }
  const server = createServer((request, response) => {
    request.on('data', (part) => { capture.bytes += part.length })
    request.on('end', () => {
      if (request.method === 'POST') capture.posts++
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the OTLP capture has no port')
  capture.url = `http://127.0.0.1:${address.port}`
  capture.close = () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve(undefined)) })
  return capture
}

/** The last `count` lines of `text`, after its first error line when that would be cut off (a stack trace's head names the error). */
function tail(/** @type {string} */ text, count = 15) {
  const lines = text.trimEnd().split('\n')
  const last = lines.slice(-count)
  const first = lines.findIndex((line) => /error/i.test(line))
  return (first >= 0 && first < lines.length - count ? [/** @type {string} */ (lines[first]), '…', ...last] : last).join('\n')
}

/**
 * Runs `file` as its own process; resolves with its exit code and output.
 * @param {string} command @param {string[]} args @param {{ cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number }} options
 */
function runProcess(command, args, { cwd, env, timeoutMs }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (part) => { stdout += part })
    // Keep the end of stderr only: a chatty harness must not fill the runner's memory.
    child.stderr.on('data', (part) => { stderr = (stderr + part).slice(-65_536) })
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, timeoutMs)
    child.on('error', (error) => { stderr += `\n${String(error)}` })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, timedOut })
    })
  })
}

async function main() {
  const config = options()
  const timeoutMs = Number(process.env.RUN_TIMEOUT_MS) || 600_000
  const started = new Date()
  const machine = {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    cores: os.availableParallelism?.() ?? os.cpus().length,
    memGiB: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} (${process.arch})`,
    load: os.loadavg(),
  }
  const measured = measuredCommit(repo, 'docs/benchmarks.md')

  /** @type {{ harness: Harness, reason: string }[]} */
  const skipped = []
  const present = config.selected.filter((h) => {
    if (existsSync(h.file)) return true
    skipped.push({ harness: h, reason: `${relative(repo, h.file)} does not exist` })
    return false
  })
  const installFailure = present.some((h) => h.peer) ? ensurePeers() : undefined

  const server = await startMockServer()
  const capture = await startCapture()
  // rein's session files, removed once every run is done (see rein.mjs).
  const kept = mkdtempSync(join(os.tmpdir(), 'rein-bench-runs-'))
  process.on('exit', () => rmSync(kept, { recursive: true, force: true }))
  const env = { ...process.env, REIN_BENCH_OTLP: capture.url, REIN_BENCH_TMP: kept, REIN_BENCH_WARMUP: String(config.warmup) }

  /**
   * @typedef {{ rep: number, ok: boolean, reason?: string, stderrTail?: string, metrics?: Record<string, number> }} Run
   * @type {Map<string, Run[]>} keyed `${harness.id}/${scenario}`
   */
  const runs = new Map()
  const total = config.reps * SCENARIOS.length * present.length
  let done = 0
  for (let rep = 0; rep < config.reps; rep++) {
    for (const [s, scenario] of SCENARIOS.entries()) {
      // Rotate the order per (rep, scenario), so a slow drift of the machine falls on every harness alike.
      const shift = (rep * SCENARIOS.length + s) % present.length
      const order = [...present.slice(shift), ...present.slice(0, shift)]
      for (const harness of order) {
        done++
        const key = `${harness.id}/${scenario}`
        if (!runs.has(key)) runs.set(key, [])
        const list = /** @type {Run[]} */ (runs.get(key))
        if (harness.peer && installFailure) {
          list.push({ rep, ok: false, reason: installFailure })
          continue
        }
        const runId = `r${done}-${harness.id}-${scenario}`
        const baseURL = `${server.url}/${runId}/${CALLS[scenario]}/v1`
        const otlpBefore = capture.bytes
        const out = /** @type {{ code: number | null, signal: string | null, stdout: string, stderr: string, timedOut: boolean }} */ (
          await runProcess(process.execPath, ['--expose-gc', ...(harness.nodeFlags ?? []), harness.file, baseURL, scenario, String(config.turns), ...(harness.variant ? [harness.variant] : [])], { cwd: repo, env, timeoutMs })
        )
        const otlpBytes = capture.bytes - otlpBefore
        const stats = server.stats(runId)
        const line = out.stdout.split('\n').find((l) => l.startsWith('RESULT '))
        const result = line ? readResult(line.slice('RESULT '.length)) : undefined
        const expected = 2 * (config.turns + config.warmup)
        let reason = ''
        if (out.timedOut) reason = `killed after ${timeoutMs} ms`
        else if (out.code !== 0) reason = `exit ${out.code ?? out.signal}`
        else if (!result) reason = 'no RESULT line'
        else if (stats.wrong > 0) reason = `${stats.wrong} request(s) with wrong tool results`
        else if (stats.requests !== expected) reason = `${stats.requests} requests, expected ${expected}`
        if (reason || !result) {
          list.push({ rep, ok: false, reason: reason || 'no RESULT line', stderrTail: tail(out.stderr || out.stdout) })
          process.stderr.write(`[${done}/${total}] rep ${rep + 1} ${scenario} ${harness.id}: FAILED (${reason})\n`)
          continue
        }
        const metrics = {
          cpu: result.cpuMsPerTurn,
          helper: result.helperMsPerTurn ?? Number.NaN,
          wall: result.wallMsPerTurn,
          startup: stats.firstRequestAt - result.timeOrigin,
          peakRss: result.maxRss / MiB,
          rssGrowth: (result.rssEnd - result.rss10) / MiB,
          heapGrowth: (result.heapEnd - result.heap10) / MiB,
          prefixMean: stats.prefixCount > 0 ? (stats.prefixSum / stats.prefixCount) * 100 : Number.NaN,
          prefixMin: stats.prefixCount > 0 ? stats.prefixMin * 100 : Number.NaN,
          otlpKiBPerTurn: otlpBytes / 1024 / (config.turns + config.warmup),
        }
        list.push({ rep, ok: true, metrics })
        process.stderr.write(`[${done}/${total}] rep ${rep + 1} ${scenario} ${harness.id}: ${metrics.cpu.toFixed(3)} ms CPU/turn, ${metrics.wall.toFixed(3)} ms wall/turn\n`)
      }
    }
  }
  const traced = config.selected.some((h) => h.id === 'rein')
  const compiler = config.extras && traced ? await traceCompilers(config, server.url, env, timeoutMs) : undefined
  await server.close()
  await capture.close()

  /** @type {Record<string, { ok: boolean, figures?: Record<string, unknown>, reason?: string, stderrTail?: string }>} */
  const extras = {}
  if (config.extras) {
    const tsx = join(repo, 'node_modules', '.bin', process.platform === 'win32' ? 'tsx.cmd' : 'tsx')
    for (const extra of EXTRAS) {
      process.stderr.write(`running bench/${extra.script} (BENCH_JSON=1)\n`)
      const out = /** @type {{ code: number | null, signal: string | null, stdout: string, stderr: string, timedOut: boolean }} */ (
        await runProcess(tsx, [extra.script], { cwd: bench, env: { ...process.env, BENCH_JSON: '1' }, timeoutMs })
      )
      const line = out.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '))
      const figures = line ? readResult(line.slice('BENCH_JSON '.length)) : undefined
      if (out.code === 0 && figures) extras[extra.id] = { ok: true, figures }
      else extras[extra.id] = { ok: false, reason: out.timedOut ? `killed after ${timeoutMs} ms` : out.code !== 0 ? `exit ${out.code ?? out.signal}` : 'no BENCH_JSON line', stderrTail: tail(out.stderr || out.stdout) }
    }
  }

  const argv = process.argv.slice(2)
  const envShown = ['TURNS', 'REPS', 'WARMUP', 'ONLY'].filter((name) => process.env[name]).map((name) => `${name}=${process.env[name]} `).join('')
  const command = process.env.npm_lifecycle_event === 'bench' && argv.length === 0 ? `${envShown}pnpm bench` : `${envShown}node bench/loop/run.mjs${argv.length ? ` ${argv.join(' ')}` : ''}`
  const markdown = renderReport({
    date: started, commit: measured, machine, command, turns: config.turns, reps: config.reps, warmup: config.warmup, quick: config.quick, partial: config.only.length > 0,
    scenarios: SCENARIOS, harnesses: present, skipped, runs, extras, extrasRun: config.extras, compiler,
  })
  process.stdout.write(markdown)
  if (config.write) {
    writeFileSync(docsFile, markdown)
    process.stderr.write(`wrote ${relative(repo, docsFile)}\n`)
  }
}

/**
 * Two runs of the floor and of durable rein per scenario under `TRACE_FLAGS`, of 1 and of all the
 * measured turns: what the optimizing compiler did in each (see compiler.mjs), and, by the
 * difference, in the measured turns after the first. Not timed: the tracing itself costs CPU.
 * @param {{ turns: number }} config @param {string} serverUrl @param {NodeJS.ProcessEnv} env @param {number} timeoutMs
 * @returns {Promise<Record<string, Record<string, import('./compiler.mjs').CompilerTrace | undefined>>>}
 */
async function traceCompilers(config, serverUrl, env, timeoutMs) {
  /** @type {Record<string, Record<string, import('./compiler.mjs').CompilerTrace | undefined>>} */
  const traces = {}
  for (const id of ['floor', 'rein']) {
    const harness = /** @type {Harness} */ (HARNESSES.find((h) => h.id === id))
    /** @type {Record<string, import('./compiler.mjs').CompilerTrace | undefined>} */
    const byScenario = {}
    traces[id] = byScenario
    for (const scenario of SCENARIOS) {
      process.stderr.write(`tracing the optimizing compiler: ${scenario} ${id}\n`)
      const traceOf = async (/** @type {number} */ turns) => {
        const baseURL = `${serverUrl}/trace-${id}-${scenario}-${turns}/${CALLS[scenario]}/v1`
        const out = /** @type {{ code: number | null, stdout: string }} */ (
          await runProcess(process.execPath, [...TRACE_FLAGS, harness.file, baseURL, scenario, String(turns), ...(harness.variant ? [harness.variant] : [])], { cwd: repo, env, timeoutMs })
        )
        return out.code === 0 ? parseCompilerTrace(out.stdout, repo) : undefined
      }
      const first = await traceOf(1)
      const all = await traceOf(config.turns)
      byScenario[scenario] = all && first ? { ...all, firstTurnMs: first.compileMs } : undefined
    }
  }
  return traces
}

/** @returns {any} */
function readResult(/** @type {string} */ text) {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

await main()
