// @ts-check
/**
 * What every harness of the loop benchmark shares: its arguments, the task, and the measured loop.
 *
 * A harness is a script `node <harness>.mjs <base-url> <scenario> <turns>` that calls `runLoop`
 * with a way to start a conversation. The task is the same everywhere: a system prompt, one tool
 * `lookup({key})` returning `value of <key>`, and per turn a user message; the mock server answers
 * with 1 or 3 tool calls, then with a short text. Scenarios:
 *
 * - A: every turn in a fresh conversation, one tool call;
 * - B: all turns in one conversation (its history grows), one tool call;
 * - C: every turn in a fresh conversation, three parallel tool calls.
 *
 * The first WARMUP turns (10, or REIN_BENCH_WARMUP; conversations of their own, ten turns each) are not measured. The harness prints one line
 * `RESULT {json}` with CPU and wall time over the measured turns (and the CPU of threads other than
 * the main one), RSS after measured turn 10 and at
 * the end, peak RSS, and its process start time (the runner compares it with the server's first
 * request to get startup time).
 */

import { readFileSync } from 'node:fs'

export const SYSTEM = 'You are a benchmark agent. When asked to look keys up, call the lookup tool once per key, then answer in one short sentence.'
export const TOOL_NAME = 'lookup'
export const TOOL_DESCRIPTION = 'Looks a key up and returns its value.'
/** JSON Schema of the tool's arguments, for harnesses that take one. */
export const TOOL_PARAMETERS = { type: 'object', properties: { key: { type: 'string', description: 'The key to look up.' } }, required: ['key'], additionalProperties: false }
/** The tool's body: trivial on purpose, so the harness's own cost is what is measured. */
export const lookup = (/** @type {string} */ key) => `value of ${key}`
/** The model id every harness asks for (the server ignores it). */
export const MODEL = 'bench-model'
export const API_KEY = 'sk-bench'
const WARMUP = warmupTurns(process.env.REIN_BENCH_WARMUP)

/** The user message of turn `i`. */
export const userText = (/** @type {number} */ i) => `Turn ${i}: look the keys up.`

/**
 * @typedef {{ send: (text: string) => Promise<string> }} Conversation
 *   `send` runs one whole turn (the model's tool calls, the tool, the answer) and returns the answer text.
 */

/** The unmeasured turns: 10 unless the runner asks for more (`--warmup`). */
function warmupTurns(/** @type {string | undefined} */ value) {
  if (value === undefined || value === '') return 10
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new Error(`REIN_BENCH_WARMUP must be a positive integer, not ${value}`)
  return n
}

/** The command line: base URL, scenario, measured turns. */
export function args() {
  const [baseURL, scenario, turns] = process.argv.slice(2)
  if (!baseURL || !['A', 'B', 'C'].includes(scenario ?? '') || !Number(turns)) {
    throw new Error('usage: node <harness>.mjs <base-url> <A|B|C> <turns>')
  }
  return { baseURL, scenario: /** @type {'A' | 'B' | 'C'} */ (scenario), turns: Number(turns) }
}

/**
 * Runs the warm-up and the measured turns and prints the RESULT line.
 * @param {{ scenario: 'A' | 'B' | 'C', turns: number, conversation: () => Promise<Conversation>, close?: () => Promise<void> }} options
 */
export async function runLoop({ scenario, turns, conversation, close }) {
  const check = (/** @type {string} */ answer, /** @type {number} */ i) => {
    if (!answer.includes('values are in')) throw new Error(`turn ${i}: unexpected answer ${JSON.stringify(answer)}`)
  }
  // Ten turns to a warm-up conversation, so a long warm-up does not grow one huge history.
  let warm = await conversation()
  for (let i = 0; i < WARMUP; i++) {
    if (i > 0 && i % 10 === 0) warm = await conversation()
    check(await warm.send(userText(i)), i)
  }
  const shared = scenario === 'B' ? await conversation() : undefined
  let rss10 = 0
  let heap10 = 0
  /** CPU and wall time the heap sample took, taken out of the figures. */
  let sampling = { user: 0, system: 0, wall: 0, helper: 0 }
  const cpu = process.cpuUsage()
  const helpers = helperCpuMs()
  const wall = performance.now()
  for (let i = 0; i < turns; i++) {
    const target = shared ?? (await conversation())
    check(await target.send(userText(WARMUP + i)), WARMUP + i)
    if (i === 9) {
      rss10 = process.memoryUsage().rss
      sampling = timed(() => { heap10 = liveHeap() })
    }
  }
  // Memory before closing (B's close lets its whole session go); CPU and wall after it, because
  // closing is part of the turns' cost: rein's exports the spans and metrics they made.
  const rssEnd = process.memoryUsage().rss
  let heapEnd = 0
  const ending = timed(() => { heapEnd = liveHeap() })
  await close?.()
  const wallMs = performance.now() - wall - sampling.wall - ending.wall
  const used = process.cpuUsage(cpu)
  const helperMs = helperCpuMs() - helpers - sampling.helper - ending.helper
  const user = used.user - sampling.user - ending.user
  const system = used.system - sampling.system - ending.system
  const result = {
    turns,
    cpuMsPerTurn: (user + system) / 1000 / turns,
    sysMsPerTurn: system / 1000 / turns,
    helperMsPerTurn: helperMs / turns,
    wallMsPerTurn: wallMs / turns,
    rss10,
    rssEnd,
    heap10,
    heapEnd,
    maxRss: process.resourceUsage().maxRSS * 1024,
    timeOrigin: performance.timeOrigin,
  }
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`)
}

/**
 * Heap bytes still reachable: after a full collection when the runner gave `--expose-gc` (what a
 * leak grows), else the heap as it is.
 */
function liveHeap() {
  const gc = /** @type {{ gc?: () => void }} */ (globalThis).gc
  gc?.()
  return process.memoryUsage().heapUsed
}

/** @param {() => void} action */
function timed(action) {
  const cpu = process.cpuUsage()
  const helpers = helperCpuMs()
  const wall = performance.now()
  action()
  const { user, system } = process.cpuUsage(cpu)
  return { user, system, wall: performance.now() - wall, helper: helperCpuMs() - helpers }
}

/**
 * CPU ms the process's threads other than the main one have used (V8's compiler and garbage
 * collector helpers, libuv's pool): the whole process's, which keeps the time of threads that have
 * ended, less the main thread's. From /proc in clock ticks of 10 ms; NaN where there is no /proc.
 */
function helperCpuMs() {
  try {
    return (ticksOf('/proc/self/stat') - ticksOf(`/proc/self/task/${process.pid}/stat`)) * 10
  } catch {
    return Number.NaN
  }
}

/** utime + stime of a /proc stat file: its 14th and 15th fields, counted after the command name, which may hold spaces. */
function ticksOf(/** @type {string} */ file) {
  const stat = readFileSync(file, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/**
 * @typedef {{ id: string, name: string, arguments: string }} AssembledCall
 * @typedef {{ content?: string | null, tool_calls?: { index: number, id?: string, function?: { name?: string, arguments?: string } }[] }} ChunkDelta
 */

/** Adds one streamed delta to the text and the tool calls assembled so far (the hand-written loops). */
export function addDelta(/** @type {{ content: string, calls: AssembledCall[] }} */ answer, /** @type {ChunkDelta} */ delta) {
  if (delta.content) answer.content += delta.content
  for (const part of delta.tool_calls ?? []) {
    const call = (answer.calls[part.index] ??= { id: '', name: '', arguments: '' })
    if (part.id) call.id = part.id
    if (part.function?.name) call.name = part.function.name
    if (part.function?.arguments) call.arguments += part.function.arguments
  }
}

/**
 * The conversation of a hand-written loop, history in an array: `complete(messages)` makes one
 * streamed request and returns the text and calls it assembled; the calls are run directly.
 * `openLog`, when given, makes a log per conversation; `save(messages, sync)` is called where rein
 * saves its log: fsynced before each request and at the end of the turn, written without the fsync
 * before the bodies of replay-safe calls (the lookup is one).
 * @param {(messages: any[]) => Promise<{ content: string, calls: AssembledCall[] }>} complete
 * @param {() => { save: (messages: any[], sync: boolean) => void }} [openLog]
 * @returns {() => Promise<Conversation>}
 */
export function handWrittenLoop(complete, openLog) {
  return async () => {
    /** @type {any[]} */
    const messages = [{ role: 'system', content: SYSTEM }]
    const log = openLog?.()
    return {
      send: async (/** @type {string} */ text) => {
        messages.push({ role: 'user', content: text })
        for (;;) {
          log?.save(messages, true)
          const { content, calls } = await complete(messages)
          if (calls.length === 0) {
            messages.push({ role: 'assistant', content })
            log?.save(messages, true)
            return content
          }
          messages.push({ role: 'assistant', content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) })
          log?.save(messages, false)
          for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: lookup(JSON.parse(call.arguments).key) })
        }
      },
    }
  }
}
