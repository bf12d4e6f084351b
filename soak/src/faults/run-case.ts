/**
 * One case: a fresh stack, one session, one or more turns against a queue of replies per route,
 * maybe cancelled at a random moment. Compares each turn with the oracle, bounds each turn with a
 * deadline, sorts anything thrown, and loads the log from disk to check it.
 */

import { ReinError } from '@rein/base'
import type { SessionEvent } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockServer, type RecordedRequest } from '@rein/testkit'
import { join } from 'node:path'
import { healthy, type Dialect, type Fault } from './catalog.ts'
import { Oracle, recordLine, type ExpectedTurn, type Item, type Route } from './oracle.ts'
import { bootStack, FALLBACK_MODEL, otherRoute, type AdapterRoute, type StackTiming } from './stack.ts'

/** Where the cancel lands: after `ms`, or when the agent emits its `index`-th event (0-based) in the turn. */
export type CancelAt = { afterMs: number } | { onEvent: number }

export interface CaseSpec {
  /** Names the case in failures: fault or sequence, adapter, fallback, cancel. */
  label: string
  primary: AdapterRoute
  fallback: boolean
  /** Turns sent in one session, each with its own user message. */
  turns: number
  queues: Record<Route, Item[]>
  /** Cancels the last turn. */
  cancel?: CancelAt
  timing: StackTiming
  maxSteps: number
  /** The suite's mock server; the case resets it to its own script. */
  server: MockServer
}

export interface CaseOutcome {
  /** What differs from the docs; empty when the case went as documented. */
  wrong: string[]
  /** A turn was not over by its deadline, or not within `CANCEL_BOUND_MS` of its cancel. */
  hung: boolean
  /** Thrown values (or unexpected rejections) that are not a `ReinError`. */
  foreignThrows: string[]
  /**
   * The case went wrong with more `TIMEOUT`s than the docs predict: on a loaded machine a healthy
   * reply can miss the short idle limit (the mock server shares the process), so the caller may
   * run it again and count that.
   */
  extraTimeouts: boolean
  /** Huge bodies the adapter did not drop after a bounded read (`Fault.readAtMost`). */
  undropped: string[]
  /** Why the log failed to load or broke an invariant; empty when valid. */
  invalidLog: string[]
  turnsRun: number
  /** The cancel was sent while the turn ran and the turn ended `aborted`. */
  cancelLanded: boolean
  /** How long the last turn took: a cancel variant picks its moment within it. */
  lastTurnMs: number
  records: { attempts: number; retries: number; fallbacks: number }
}

/** Anything slower than this per turn, beyond what the replies' stalls take by design, counts as hung. */
const DEADLINE_MS = 15_000
/** A turn must be over this soon after its cancel (generous: a hang guard, not a speed check). */
const CANCEL_BOUND_MS = 5_000

export async function runCase(spec: CaseSpec): Promise<CaseOutcome> {
  const outcome: CaseOutcome = { wrong: [], hung: false, extraTimeouts: false, undropped: [], foreignThrows: [], invalidLog: [], turnsRun: 0, cancelLanded: false, lastTurnMs: 0, records: { attempts: 0, retries: 0, fallbacks: 0 } }
  const queues: Record<Route, Item[]> = { primary: [...spec.queues.primary], fallback: [...spec.queues.fallback] }
  const oracle = new Oracle({ primary: [...spec.queues.primary], fallback: [...spec.queues.fallback] }, spec.timing, spec.fallback, spec.maxSteps)
  const { timing } = spec
  const dialectOf = (route: Route): Dialect => route === 'primary' ? spec.primary : otherRoute(spec.primary)
  const slowMs = Math.round(timing.idleMs * 1.5)
  let slowConsumer = false
  const huge: { fault: Fault; request: RecordedRequest }[] = []
  const stack = await bootStack({
    primary: spec.primary, fallback: spec.fallback, timing, server: spec.server,
    script: (request) => {
      slowConsumer = false
      const route: Route = (request.body as { model?: unknown } | undefined)?.model === FALLBACK_MODEL ? 'fallback' : 'primary'
      const item = queues[route].shift()
      if (!item) return healthy('text', dialectOf(route))
      if ('healthy' in item) return healthy(item.healthy, dialectOf(route))
      // The listener below blocks on text deltas while a slow-consumer reply is being read.
      slowConsumer = item.fault.slowConsumer === true
      if (item.fault.readAtMost !== undefined) huge.push({ fault: item.fault, request })
      return item.fault.reply(dialectOf(route), timing.idleMs)
    },
  })
  const { agent } = stack
  let turnEvents = 0
  let cancelOnEvent: number | undefined
  let cancelledAt: number | undefined
  const cancelNow = () => {
    cancelledAt = Date.now()
    agent.cancel()
  }
  agent.subscribe((event) => {
    if (cancelOnEvent !== undefined && turnEvents++ === cancelOnEvent) {
      cancelOnEvent = undefined
      cancelNow()
    }
    if (slowConsumer && event.type === 'text-delta') {
      // A consumer busy with a chunk, longer than the idle limit: the docs say that never trips it.
      const until = Date.now() + slowMs
      while (Date.now() < until) { /* busy */ }
    }
  })
  try {
    for (let turn = 1; turn <= spec.turns; turn++) {
      const last = turn === spec.turns
      const expected = oracle.turn()
      const cancel = last ? spec.cancel : undefined
      turnEvents = 0
      let timer: NodeJS.Timeout | undefined
      if (cancel && 'afterMs' in cancel) timer = setTimeout(cancelNow, cancel.afterMs)
      if (cancel && 'onEvent' in cancel) cancelOnEvent = cancel.onEvent
      const before = agent.session.events.length
      const started = Date.now()
      const result = await bounded(agent.send(`message ${turn}`), DEADLINE_MS + slowBudget(expected, timing))
      clearTimeout(timer)
      outcome.lastTurnMs = Date.now() - started
      cancelOnEvent = undefined
      slowConsumer = false
      outcome.turnsRun++
      if (result.kind === 'hung') {
        outcome.hung = true
        agent.cancel()
        break
      }
      // Cancelling ends a turn promptly (the llm README): a turn still going long after is a hang too.
      if (cancelledAt !== undefined && Date.now() - cancelledAt > CANCEL_BOUND_MS) outcome.hung = true
      if (result.kind === 'threw') {
        if (result.error instanceof ReinError) outcome.wrong.push(`turn ${turn}: send threw ${result.error.code}: ${result.error.message}`)
        else outcome.foreignThrows.push(`turn ${turn}: send threw ${describe(result.error)}`)
        break
      }
      const records = agent.session.events.slice(before).flatMap((event) => toRecord(event) ?? [])
      count(outcome, records)
      if (cancel && result.value.reason === 'aborted') {
        outcome.cancelLanded = true
        continue
      }
      compare(outcome, turn, expected, { reason: result.value.reason, code: result.value.error?.code, records }, cancel !== undefined)
    }
    if (outcome.cancelLanded && !outcome.hung) {
      // The session goes on after a cancel: every reply is healthy now, so the next turn completes.
      queues.primary.length = 0
      queues.fallback.length = 0
      const after = await bounded(agent.send('after the cancel'), DEADLINE_MS)
      outcome.turnsRun++
      if (after.kind === 'hung') {
        outcome.hung = true
      } else if (after.kind === 'threw') {
        if (after.error instanceof ReinError) outcome.wrong.push(`after the cancel: send threw ${after.error.code}`)
        else outcome.foreignThrows.push(`after the cancel: send threw ${describe(after.error)}`)
      } else if (after.value.reason !== 'completed') {
        if (after.value.error?.code === 'TIMEOUT') outcome.extraTimeouts = true
        outcome.wrong.push(`after the cancel: the turn ended ${after.value.reason} ${after.value.error?.code ?? ''}, not completed`)
      }
    }
  } finally {
    await checkLog(stack, agent.session.id, agent.session.events, outcome)
    await checkDropped(huge, outcome)
    await stack.close()
  }
  return outcome
}

/** The time a turn's replies take by design (stalls, trickles, a slow consumer), counted generously. */
function slowBudget(expected: ExpectedTurn, timing: StackTiming): number {
  const attempts = expected.records.filter((line) => line.startsWith('attempt')).length
  return (attempts + 1) * timing.idleMs * 3
}

type Bounded<T> = { kind: 'done'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'hung' }

/** `promise`'s result, or `hung` once `ms` passed: the hang guard. */
async function bounded<T>(promise: Promise<T>, ms: number): Promise<Bounded<T>> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<Bounded<T>>((resolve) => { timer = setTimeout(() => resolve({ kind: 'hung' }), ms) })
  try {
    return await Promise.race([promise.then((value) => ({ kind: 'done' as const, value }), (error: unknown) => ({ kind: 'threw' as const, error })), deadline])
  } finally {
    clearTimeout(timer)
  }
}

function toRecord(event: SessionEvent): string | undefined {
  const route = (model: unknown): Route => model === FALLBACK_MODEL ? 'fallback' : 'primary'
  const data = event.data as Record<string, unknown>
  if (event.type === 'llm/attempt') {
    const failure = data.failure as { code?: string } | undefined
    return recordLine({ kind: 'attempt', route: route(data.model), retry: data.retry as number, ...(failure?.code ? { code: failure.code, shown: data.shown === true } : {}) })
  }
  if (event.type === 'llm/retry') return recordLine({ kind: 'retry', delayMs: data.delayMs as number })
  if (event.type === 'llm/fallback') {
    const from = data.from as { model?: unknown }
    const to = data.to as { model?: unknown }
    return recordLine({ kind: 'fallback', from: route(from.model), to: route(to.model) })
  }
  return undefined
}

function count(outcome: CaseOutcome, records: readonly string[]): void {
  for (const line of records) {
    if (line.startsWith('attempt')) outcome.records.attempts++
    else if (line.startsWith('retry')) outcome.records.retries++
    else outcome.records.fallbacks++
  }
}

function compare(outcome: CaseOutcome, turn: number, expected: ExpectedTurn, actual: { reason: string; code: string | undefined; records: string[] }, cancelSent: boolean): void {
  const want = `${expected.reason}${expected.code ? ` ${expected.code}` : ''}`
  const got = `${actual.reason}${actual.code ? ` ${actual.code}` : ''}`
  const recordsDiffer = JSON.stringify(expected.records) !== JSON.stringify(actual.records)
  if (want !== got || recordsDiffer) {
    const timeouts = (lines: readonly string[]) => lines.filter((line) => line.includes(' TIMEOUT')).length
    if (timeouts(actual.records) > timeouts(expected.records)) outcome.extraTimeouts = true
    outcome.wrong.push(`turn ${turn}${cancelSent ? ' (cancel sent too late to land)' : ''}: expected ${want} [${expected.records.join(', ')}], got ${got} [${actual.records.join(', ')}]`)
  }
}

/** Closes the agent so its log is durable and unlocked, then loads it from disk and checks it. */
async function checkLog(stack: Awaited<ReturnType<typeof bootStack>>, id: string, live: readonly SessionEvent[], outcome: CaseOutcome): Promise<void> {
  try {
    await bounded(stack.agent.close(), DEADLINE_MS)
    const loaded = await new JsonlSessionStore({ root: join(stack.folder, 'sessions') }).load(id)
    const problems = validateSessionInvariants(loaded.events)
    if (loaded.events.length !== live.length) problems.push(`the file holds ${loaded.events.length} events, the session ${live.length}`)
    outcome.invalidLog.push(...problems)
  } catch (error) {
    outcome.invalidLog.push(`the log did not load: ${describe(error)}`)
    if (!(error instanceof ReinError)) outcome.foreignThrows.push(`loading the log threw ${describe(error)}`)
  }
}

/** Every huge body was hung up on after a bounded read: the server saw the client go, having taken little. */
async function checkDropped(served: readonly { fault: Fault; request: RecordedRequest }[], outcome: CaseOutcome): Promise<void> {
  for (const { fault, request } of served) {
    const settled = await within(request.reply.settled, DEADLINE_MS)
    const { bytesWritten, clientClosedEarly } = request.reply
    if (!settled || !clientClosedEarly || bytesWritten > fault.readAtMost!) {
      outcome.undropped.push(`${fault.name}: ${settled ? '' : 'still being read; '}${clientClosedEarly ? '' : 'not hung up on; '}${bytesWritten} bytes accepted (bound ${fault.readAtMost})`)
    }
  }
}

async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (await bounded(promise.then(() => true), ms)).kind === 'done'
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)
}
