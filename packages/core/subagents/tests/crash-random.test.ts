/**
 * Real processes, real SIGKILL at a random point of a delegation: the parent delegates, its child
 * notes three things (a side effect that must never run twice) and answers; the process dies at a
 * gate picked by a seeded PRNG — any store claim, flush or close, any LLM stream, any side effect,
 * of parent or child — sometimes again while a second process resumes. The test's own process then
 * resumes the parent to its answer, and what must hold wherever the kills landed is checked.
 *
 * REIN_CRASH_ITERATIONS (default 4) sets how many kills; REIN_CRASH_SEED replays one (each test's
 * title names its seed; run that seed with REIN_CRASH_ITERATIONS=1). REIN_CRASH_VERBOSE=1 prints
 * where each kill landed. A kill "parked" at a gate replays exactly; one "in flight" (let go, then
 * killed at once) lands somewhere inside the step after the gate, e.g. mid-write, so only roughly.
 */

import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { eventData, type SessionEvent, type SessionSummary } from '@rein/session'
import { seededRandom, validateSessionInvariants } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { onGates, spawnGated } from './fixtures/gates.ts'
import { bootGatedStack, NOTE_CALLS, PARENT_CALL } from './fixtures/gated-stack.ts'
import { CHILD_ANSWER, CHILD_TASK, taskOf } from './fixtures/stack.ts'


const ITERATIONS = Number(process.env.REIN_CRASH_ITERATIONS ?? 4)
const BASE_SEED = process.env.REIN_CRASH_SEED === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(process.env.REIN_CRASH_SEED) >>> 0
const VERBOSE = process.env.REIN_CRASH_VERBOSE === '1'
/** Seed i of the run; the first is the base seed, so a failing iteration replays on its own. */
const seeds = Array.from({ length: ITERATIONS }, (_, i) => (BASE_SEED + i * 0x9e3779b9) >>> 0)

const dirs: string[] = []
const spawned: ChildProcess[] = []
afterEach(() => {
  // Whatever a failing test left running is killed here, never left on the machine.
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

interface Home { sessions: string; notes: string; parentId: string }

function home(): Home {
  const dir = mkdtempSync(join(tmpdir(), 'rein-subagent-random-'))
  dirs.push(dir)
  return { sessions: join(dir, 'sessions'), notes: join(dir, 'notes'), parentId: `parent-${Math.random().toString(36).slice(2, 10)}` }
}

/** Where to kill: at the `at`-th gate (1-based), parked there or let go first. */
interface Kill { at: number; inFlight: boolean }

interface Drive {
  /** The gates passed or stopped at, in order. */
  gates: string[]
  /** The gate the process was killed at; undefined when it finished first. */
  killedAt?: string
}

/** What broke, collected rather than thrown: one failure names every invariant it broke. */
type Problems = string[]

function same(problems: Problems, what: string, actual: unknown, expected: unknown) {
  if (!isDeepStrictEqual(actual, expected)) problems.push(`${what}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
}

/** Runs the fixture, letting every gate go but the `kill.at`-th, where it is SIGKILLed. */
async function drive(home: Home, mode: 'run' | 'resume', kill: Kill | undefined, problems: Problems): Promise<Drive> {
  const child = spawnGated(home, mode)
  spawned.push(child)
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  const gates: string[] = []
  let killedAt: string | undefined
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  onGates(child, (gate) => {
    if (killedAt !== undefined) return
    gates.push(gate)
    if (gates.length === kill?.at) {
      killedAt = gate
      if (kill.inFlight) child.stdin.write('\n')
      child.kill('SIGKILL')
    } else child.stdin.write('\n')
  })
  const [code, signal] = await exited
  if (killedAt === undefined && code !== 0) throw new Error(`the fixture (${mode}) exited with ${code ?? signal} before its kill:\n${err}`)
  // Let go at its last gate, a process may just make it to its end before the signal.
  if (killedAt !== undefined && signal !== 'SIGKILL' && !(kill?.inFlight && code === 0)) problems.push(`${mode}: the kill left it exiting with ${code ?? signal}:\n${err}`)
  // Nothing of it is left running: the pid names no live process.
  if (alive(child.pid!)) problems.push(`${mode}: process ${child.pid} still runs`)
  return { gates, ...(killedAt === undefined ? {} : { killedAt }) }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The gates of a run nobody kills, counted once per file: the range kill points are drawn from. */
let calibration: Promise<{ home: Home; gates: string[]; problems: Problems }> | undefined
const calibrate = () => calibration ??= (async () => {
  const at = home()
  const problems: Problems = []
  return { home: at, gates: (await drive(at, 'run', undefined, problems)).gates, problems }
})()

const ofType = (events: readonly SessionEvent[], type: string) => events.filter((event) => event.type === type)
const results = (events: readonly SessionEvent[], callId: string) => ofType(events, 'tool/result').map((event) => eventData(event, 'tool/result')).filter((data) => data.callId === callId)
const intents = (events: readonly SessionEvent[]) => ofType(events, 'tool/call').map((event) => eventData(event, 'tool/call').callId)
const textOf = (result: { content: readonly { type: string; text?: string }[] }) => result.content.map((block) => block.text ?? '').join('')
const turnEnds = (events: readonly SessionEvent[]) => ofType(events, 'turn/end').map((event) => eventData(event, 'turn/end').reason)
const callsAsked = (events: readonly SessionEvent[]) => ofType(events, 'assistant/message')
  .flatMap((event) => eventData(event, 'assistant/message').message.content.flatMap((block) => (block.type === 'tool-call' ? [block.id] : [])))
const logs = (at: Home) => (existsSync(at.sessions) ? readdirSync(at.sessions).filter((file) => file.endsWith('.jsonl')) : [])

/** Whether the session's lock file names a process that is alive. */
function liveLock(at: Home, id: string): boolean {
  const lock = join(at.sessions, `${id}.lock`)
  return existsSync(lock) && alive(Number(readFileSync(lock, 'utf8').trim()))
}

function notesWritten(notes: string): string[] {
  return existsSync(notes) ? readFileSync(notes, 'utf8').split('\n').filter((line) => line !== '') : []
}

type Root = Awaited<ReturnType<typeof bootGatedStack>>['root']

/** The parent's log as the kills left it, before the test's own resume. */
interface Before {
  stored: boolean
  status?: SessionSummary['status']
  /** The delegation's intent is durable, and no result is. */
  openCall: boolean
  child?: SessionSummary
  childTurns: number
}

async function snapshot(root: Root, at: Home): Promise<Before> {
  const summaries = await root.sessions.list()
  const parent = summaries.find((summary) => summary.id === at.parentId)
  const child = summaries.find((summary) => summary.parentSessionId === at.parentId && summary.parentCallId === PARENT_CALL)
  const childTurns = child ? ofType((await root.sessions.load(child.id)).events, 'turn/start').length : 0
  if (!parent) return { stored: false, openCall: false, childTurns, ...(child ? { child } : {}) }
  const events = (await root.sessions.load(at.parentId)).events
  const openCall = intents(events).includes(PARENT_CALL) && results(events, PARENT_CALL).length === 0
  return { stored: true, status: parent.status, openCall, childTurns, ...(child ? { child } : {}) }
}

/**
 * Resumes the parent here, to its answer, and returns what it found (for the log) after pushing
 * to `problems` every invariant the kills broke. `processes`: how many ran the delegation, this one too.
 */
async function resumeAndCheck(at: Home, processes: number, problems: Problems): Promise<string> {
  const { root, llm } = await bootGatedStack({ root: at.sessions, notes: at.notes, parentId: at.parentId })
  const before = await snapshot(root, at)
  if (!before.stored) {
    // Killed before the parent's first flush: nothing of it, so nothing of a child, exists.
    same(problems, 'a child without a parent', before.child, undefined)
    same(problems, 'notes without a parent', notesWritten(at.notes), [])
    same(problems, 'logs without a parent', logs(at), [])
    return 'parent never stored'
  }

  const { agent, repaired } = await root.agents.resume(at.parentId)
  try {
    if (before.status === 'completed') same(problems, 'a completed parent\'s repair', repaired, { paired: [], rerun: [], recovered: [] })
    else {
      const { reason, text } = await agent.continue()
      same(problems, 'the parent\'s answer', { reason, text }, { reason: 'completed', text: 'Parent done.' })
    }
    // The child a crash left under the open call is settled by the subagent tool's recover hook.
    if (before.openCall && before.child) same(problems, 'recovered', repaired.recovered, [{ callId: PARENT_CALL, name: 'subagent', isError: false }])
  } finally {
    await agent.close()
  }

  const parent = (await root.sessions.load(at.parentId)).events
  problems.push(...validateSessionInvariants(parent).map((problem) => `parent log: ${problem}`))
  same(problems, 'the parent\'s last turn', turnEnds(parent).at(-1), 'completed')
  const found = results(parent, PARENT_CALL)
  same(problems, 'results of the delegation', found.length, 1)
  const result = found[0]!

  const summaries = await root.sessions.list()
  const children = summaries.filter((summary) => summary.parentSessionId === at.parentId && summary.parentCallId === PARENT_CALL)
  if (children.length > 1) problems.push(`${children.length} children for one call`)
  const child = children[0]
  same(problems, 'sessions', summaries.map((summary) => summary.id).sort(), [at.parentId, ...(child ? [child.id] : [])].sort())
  const notes = notesWritten(at.notes)
  if (new Set(notes).size !== notes.length) problems.push(`a side effect ran twice: ${notes.join(' | ')}`)

  let outcome: string
  if (!child) {
    // No child was stored: the call says it never ran, or (a delegation that started) that its outcome is unknown.
    const allowed = intents(parent).includes(PARENT_CALL) ? ['TOOL_NOT_STARTED', 'TOOL_OUTCOME_UNKNOWN'] : ['TOOL_NOT_STARTED']
    if (!result.isError || !allowed.includes(result.code ?? '')) problems.push(`no child, yet the delegation's result is ${JSON.stringify(result)}; expected an error ${allowed.join(' or ')}`)
    same(problems, 'notes without a child', notes, [])
    outcome = result.code ?? 'no code'
  } else {
    // A stored child, completed or interrupted, gives its answer: read, or continued once from its log.
    if (result.isError || !textOf(result).includes(CHILD_ANSWER) || !textOf(result).includes(`subagent session ${child.id}`)) {
      problems.push(`child ${child.id} is stored, yet the delegation's result is ${JSON.stringify(result)}`)
    }
    same(problems, 'the child\'s status', child.status, 'completed')
    const events = (await root.sessions.load(child.id)).events
    problems.push(...validateSessionInvariants(events).map((problem) => `child log: ${problem}`))
    // Never started over: one task, and each of its model's answers logged once (a lost one asked again).
    same(problems, 'the child\'s user messages', ofType(events, 'user/message').length, 1)
    same(problems, 'the calls the child\'s model asked for', callsAsked(events), [...NOTE_CALLS])
    same(problems, 'the child\'s answers', ofType(events, 'assistant/message').length, 3)
    // Each process that ran it left at most one turn; every turn but the last was repaired (interrupted).
    const ends = turnEnds(events)
    if (ends.length > processes) problems.push(`the child has ${ends.length} turns from ${processes} processes`)
    same(problems, 'how the child\'s turns ended', ends, [...ends.slice(0, -1).map(() => 'interrupted'), 'completed'])
    // Here: a completed child is only read; an interrupted one (or one made here) runs one turn.
    const completedBefore = before.child?.status === 'completed'
    same(problems, 'the child\'s turns after this resume', ends.length, completedBefore ? before.childTurns : before.childTurns + 1)
    if (completedBefore) same(problems, 'requests of a completed child', llm.requests.filter((request) => taskOf(request) === CHILD_TASK).length, 0)
    // A side effect ran only after its intent was durable, and a call said done really ran.
    for (const note of notes) {
      const [session, callId = ''] = note.split(' ')
      const noted = results(events, callId)[0]
      if (session !== child.id || !intents(events).includes(callId)) problems.push(`note ${note} without a durable intent in the child's log`)
      else if (noted?.isError && noted.code !== 'TOOL_OUTCOME_UNKNOWN') problems.push(`note ${note} ran, yet its result says ${noted.code}`)
    }
    for (const callId of NOTE_CALLS) {
      const noted = results(events, callId)[0]
      if (noted && !noted.isError && !notes.includes(`${child.id} ${callId}`)) problems.push(`${callId} succeeded without its side effect`)
    }
    // A completed child only read here keeps the lock a killed process left; it names no live process.
    if (liveLock(at, child.id)) problems.push('the child\'s lock names a live process')
    outcome = before.child === undefined ? 'child made here' : `child ${before.child.status} (${before.childTurns} turns) → answer`
  }
  if (existsSync(join(at.sessions, `${at.parentId}.lock`))) problems.push('the parent was not released')

  // A second resume finds the log clean: nothing is recovered, run or noted again.
  const sizes = logs(at).map((file) => readFileSync(join(at.sessions, file)).length)
  const again = await root.agents.resume(at.parentId)
  await again.agent.close()
  same(problems, 'a second resume\'s repair', again.repaired, { paired: [], rerun: [], recovered: [] })
  same(problems, 'notes after a second resume', notesWritten(at.notes), notes)
  same(problems, 'log sizes after a second resume', logs(at).map((file) => readFileSync(join(at.sessions, file)).length), sizes)
  return outcome
}

describe('a delegation killed with SIGKILL at a random point', () => {
  it('runs to its answer through every gate when nobody kills it', async () => {
    const { home: at, gates, problems } = await calibrate()
    expect(gates).toContain('create:child')
    expect(gates).toContain('effect:s3')
    expect(gates.at(-1)).toBe('close:parent')
    expect(await resumeAndCheck(at, 1, problems)).toBe('child completed (1 turns) → answer')
    expect(problems).toEqual([])
  }, 60_000)

  for (const seed of seeds) {
    it(`settles the call by the child's log and never repeats a side effect (seed ${seed})`, async () => {
      const { gates } = await calibrate()
      const random = seededRandom(seed)
      // Drawn up front, whatever happens, so a seed always means the same kill points.
      const first: Kill = { at: 1 + Math.floor(random() * gates.length), inFlight: random() < 1 / 3 }
      const second: Kill | undefined = random() < 1 / 2 ? { at: 1 + Math.floor(random() * gates.length), inFlight: random() < 1 / 3 } : undefined
      const at = home()
      const where: string[] = []
      const problems: Problems = []
      const describeKill = (mode: string, kill: Kill, drove: Drive) => (drove.killedAt === undefined
        ? `${mode} finished after ${drove.gates.length} gates, before gate ${kill.at}`
        : `${mode} killed ${kill.inFlight ? 'in flight' : 'parked'} at gate ${kill.at}/${gates.length} ${drove.killedAt}`)
      const replay = () => `seed ${seed} (replay: REIN_CRASH_SEED=${seed} REIN_CRASH_ITERATIONS=1): ${where.join('; ')}`
      try {
        where.push(describeKill('run', first, await drive(at, 'run', first, problems)))
        let processes = 2
        if (second && existsSync(join(at.sessions, `${at.parentId}.jsonl`))) {
          where.push(describeKill('resume', second, await drive(at, 'resume', second, problems)))
          processes++
        }
        where.push(await resumeAndCheck(at, processes, problems))
      } catch (error) {
        if (error instanceof Error) error.message = `${replay()}\n${error.message}`
        throw error
      }
      if (VERBOSE) console.info(replay())
      // The kill points ride along, so a failure says how to replay it.
      expect({ kills: replay(), problems }).toEqual({ kills: replay(), problems: [] })
    }, 60_000)
  }
})
