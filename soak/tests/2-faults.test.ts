// Suite 2, provider faults (#17): every fault the testkit's mock server can inject, alone and in
// seeded random sequences, with and without a fallback model, through both OpenAI-wire adapters,
// each run also once with a cancel at a random moment — each through a real agent turn on a JSONL
// session. Each case must end as the docs say (code, retried or not, fell back or not), within a
// deadline, throw nothing but ReinErrors, keep memory bounded and leave a log that loads and holds
// every invariant.

import { startMockOpenAiServer, type MockServer } from '@rein/testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { broken, publish, type Figure } from '../src/figures.ts'
import { faultCatalog } from '../src/faults/catalog.ts'
import { describeCancel, matrixShapes, randomCancel, randomShape, type Shape } from '../src/faults/cases.ts'
import { memoryProbe } from '../src/faults/memory.ts'
import { runCase, type CaseOutcome, type CaseSpec } from '../src/faults/run-case.ts'
import type { StackTiming } from '../src/faults/stack.ts'
import { FULL, limit, rng, seedOf, size } from '../src/plan.ts'

const SEED = seedOf(2002)
const MB = 1024 * 1024
/** Short retries and a short idle limit, so every stall ends fast; Retry-After is capped at 30 ms. */
const TIMING: StackTiming = { maxRetries: 2, initialDelayMs: 2, maxDelayMs: 8, retryAfterCapMs: 30, idleMs: 250 }
const MAX_STEPS = 8
/** Heap after gc may grow this much over the whole run. */
const HEAP_GROWTH_BOUND = 64 * MB

const catalog = faultCatalog({ fillerBytes: size('fault-filler-mb', 16, 200) * MB })
/** Adapter × fallback pairings per fault (round-robin in the fast subset), and whether retried faults also run on every retry. */
const combos = size('fault-combos', 1, 4)
const persistent = size('fault-persistent', 0, 1) === 1
const sequences = size('fault-sequences', 30, 1000)

interface Tally {
  cases: number
  sequences: number
  turns: number
  cancelsSent: number
  cancelsLanded: number
  reruns: number
  attempts: number
  retries: number
  fallbacks: number
  wrong: string[]
  hangs: string[]
  foreign: string[]
  invalidLogs: string[]
  undropped: string[]
}

const tally: Tally = { cases: 0, sequences: 0, turns: 0, cancelsSent: 0, cancelsLanded: 0, reruns: 0, attempts: 0, retries: 0, fallbacks: 0, wrong: [], hangs: [], foreign: [], invalidLogs: [], undropped: [] }
const unhandled: string[] = []
const onUnhandled = (error: unknown) => { unhandled.push(error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)) }
let server: MockServer | undefined

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled)
  await server?.close()
})

describe('suite 2: provider faults', () => {
  it('ends every fault, alone and in sequences, as documented, in bounded time and memory, with a valid log', async () => {
    process.on('unhandledRejection', onUnhandled)
    server = await startMockOpenAiServer([])
    const random = rng(SEED)
    const memory = memoryProbe()
    const note = (shape: Shape, suffix: string, outcome: CaseOutcome) => {
      const label = `${shape.label}${suffix}`
      tally.turns += outcome.turnsRun
      tally.attempts += outcome.records.attempts
      tally.retries += outcome.records.retries
      tally.fallbacks += outcome.records.fallbacks
      if (outcome.wrong.length > 0) tally.wrong.push(`${label}: ${outcome.wrong.join('; ')}`)
      if (outcome.hung) tally.hangs.push(label)
      if (outcome.foreignThrows.length > 0) tally.foreign.push(`${label}: ${outcome.foreignThrows.join('; ')}`)
      if (outcome.undropped.length > 0) tally.undropped.push(`${label}: ${outcome.undropped.join('; ')}`)
      if (outcome.invalidLog.length > 0) tally.invalidLogs.push(`${label}: ${outcome.invalidLog.join('; ')}`)
    }
    /** Runs a case; one that went wrong with more TIMEOUTs than documented is run again, at most twice (counted). */
    const attempt = async (spec: CaseSpec) => {
      for (let run = 1; ; run++) {
        const outcome = await runCase(spec)
        if (!outcome.extraTimeouts || outcome.hung || run === 3) return outcome
        tally.reruns++
      }
    }
    /** The shape as it is, then once more with a cancel at a random moment of its last turn. */
    const play = async (shape: Shape) => {
      const spec: CaseSpec = { label: shape.label, primary: shape.primary, fallback: shape.fallback, turns: shape.turns, queues: shape.queues, timing: TIMING, maxSteps: MAX_STEPS, server: server! }
      const plain = await attempt(spec)
      note(shape, '', plain)
      const cancel = randomCancel(random, plain.lastTurnMs)
      const cancelled = await attempt({ ...spec, cancel })
      note(shape, `, ${describeCancel(cancel)}`, cancelled)
      tally.cancelsSent++
      if (cancelled.cancelLanded) tally.cancelsLanded++
    }

    // Warm up (imports, JIT, first sockets) before the baseline, so it measures the run, not the start.
    await runCase({ label: 'warm-up', primary: 'openai', fallback: true, turns: 1, queues: { primary: [], fallback: [] }, timing: TIMING, maxSteps: MAX_STEPS, server })
    const baseline = memory.settled()
    const stopSampling = memory.sample(20)

    for (const shape of matrixShapes(catalog, { combos, persistent, maxRetries: TIMING.maxRetries })) {
      await play(shape)
      tally.cases++
    }
    for (let index = 0; index < sequences; index++) {
      await play(randomShape(random, catalog, index))
      tally.sequences++
    }

    const peak = stopSampling()
    const end = memory.settled()
    const growth = end - baseline
    const peakAbove = peak - baseline
    const memoryOver = growth > HEAP_GROWTH_BOUND ? 1 : 0
    const mb = (bytes: number) => Math.round(bytes / MB * 10) / 10

    const figures: Figure[] = [
      { label: 'cases with an outcome other than the documented one (code, retries, fallbacks, ending)', value: tally.wrong.length, must: 0 },
      { label: 'cases that hung (a turn not over by its deadline)', value: tally.hangs.length, must: 0 },
      { label: 'throws and unhandled rejections that are not a ReinError', value: tally.foreign.length + unhandled.length, must: 0 },
      { label: 'session logs that fail to load or break an invariant', value: tally.invalidLogs.length, must: 0 },
      { label: `${memory.measure} grown by more than ${HEAP_GROWTH_BOUND / MB} MB over the run (0 or 1)`, value: memoryOver, must: 0 },
      { label: '200 MB bodies not hung up on after a bounded read (≤ 32 MB accepted)', value: tally.undropped.length, must: 0 },
      { label: 'faults in the matrix', value: catalog.length },
      { label: 'matrix cases (each also run with a cancel)', value: tally.cases },
      { label: 'random sequences (each also run with a cancel)', value: tally.sequences },
      { label: 'agent turns', value: tally.turns },
      { label: 'cancels sent', value: tally.cancelsSent, atLeast: 1 },
      // A cancel that comes after the turn proves nothing: at least a third must land inside it.
      { label: 'cancels that landed before the turn ended', value: tally.cancelsLanded, atLeast: Math.ceil(tally.cancelsSent / 3) },
      // Re-runs can hide an intermittent TIMEOUT: bounded, so a real one still fails the suite.
      { label: 'cases run again after more TIMEOUTs than documented (a healthy reply missing the short idle limit on a loaded machine; at most 1 in 20)', value: tally.reruns, ...(tally.reruns * 20 > tally.cases ? { must: 0 } : {}) },
      { label: 'provider attempts / retries / fallbacks logged', value: `${tally.attempts} / ${tally.retries} / ${tally.fallbacks}` },
      { label: `${memory.measure} growth over the run (MB)`, value: mb(growth) },
      { label: 'peak heap + buffers above the start, garbage included (MB)', value: mb(peakAbove) },
    ]
    publish({
      id: '2-faults',
      title: 'Provider faults',
      ran: `${catalog.length} faults (429 in each Retry-After form, 5xx, 408, stalls, disconnects, truncations, malformed and wrong-shaped JSON, in-stream errors, context overflow and model-not-found in five servers' wordings, 401/402/403, HTML and 200 MB bodies, a slow consumer) in ${tally.cases} matrix cases and ${tally.sequences} seeded random sequences of 1–3 turns, through @rein/llm-openai and @rein/llm-deepseek against the testkit's mock server, with and without a fallback model, each run twice (as is, and cancelled at a random moment), ${tally.turns} agent turns on JSONL sessions in all, with a ${TIMING.idleMs} ms idle limit and ${TIMING.maxRetries} retries${FULL ? '' : ' (fast subset)'}`,
      seed: SEED,
      figures,
      promise: 'For every fault in this matrix (each tested alone and in random sequences), a turn ends with the failure code the docs give, retried and sent to the fallback model exactly as documented, within its deadline whether cancelled or not, and leaves a session log that loads and keeps every invariant; a 200 MB body is dropped after a bounded read.',
    })
    const detail = [
      ...tally.wrong.slice(0, 15).map((line) => `wrong: ${line}`),
      ...tally.hangs.slice(0, 5).map((line) => `hung: ${line}`),
      ...[...tally.foreign, ...unhandled].slice(0, 5).map((line) => `threw: ${line}`),
      ...tally.invalidLogs.slice(0, 5).map((line) => `log: ${line}`),
      ...tally.undropped.slice(0, 5).map((line) => `undropped: ${line}`),
    ].join('\n')
    expect(broken(figures), `seed ${SEED} (replay with REIN_SOAK_SEED=${SEED})\n${detail}`).toEqual([])
  }, limit(180_000))
})
