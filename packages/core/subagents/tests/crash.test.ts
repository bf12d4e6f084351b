/**
 * Real processes, real SIGKILL: a parent delegates, the process dies at a point of the child's
 * life, and resuming the parent settles the call by what the child's log says — a completed
 * child's answer is read, an interrupted one is continued once from its log, a child never stored
 * leaves the call to the usual repair — with every call in both logs paired.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import { eventData, spending, type SessionEvent } from '@rein/session'
import { killWhenPrinted, validateSessionInvariants } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { onGates, spawnGated } from './fixtures/gates.ts'
import { bootGatedStack } from './fixtures/gated-stack.ts'
import { pidFile, runs } from './fixtures/sleeper.ts'
import { bootStack, CHILD_ANSWER, CHILD_TASK, CHILD_USAGE, PARENT_USAGE, pidFolder, taskOf, type Hold, type Scenario } from './fixtures/stack.ts'

const fixture = fileURLToPath(new URL('./fixtures/delegate.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

const dirs: string[] = []
const spawned: ChildProcess[] = []
/** Processes a killed fixture left behind (a `sleeper`'s `sleep`). */
const leftovers: number[] = []
afterEach(() => {
  // Whatever a failing test left running is killed here, never left on the machine.
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of leftovers.splice(0)) if (runs(pid)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temp REIN_HOME; its `sessions` folder is the store's root. */
function home(): { dir: string; sessions: string; parentId: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rein-subagent-crash-'))
  dirs.push(dir)
  return { dir, sessions: join(dir, 'sessions'), parentId: `parent-${Math.random().toString(36).slice(2, 10)}` }
}

/** Runs the fixture until it prints `marker`, runs `whileAlive`, then kills the fixture with SIGKILL. */
async function killAt(marker: string, args: { sessions: string; scenario: Scenario; mode: 'run' | 'resume'; parentId: string; hold?: Hold }, whileAlive?: () => Promise<void>) {
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', fixture, args.sessions, args.scenario, args.mode, args.parentId, ...(args.hold ? [args.hold] : [])], {
    cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REIN_HOME: join(args.sessions, '..') },
  })
  spawned.push(child)
  await killWhenPrinted(child, marker, whileAlive)
}

/** The test's own process on the same sessions folder: nothing hangs here. */
async function resumeHere(sessions: string, scenario: Scenario, telemetry = false) {
  const stack = await bootStack({ root: sessions, scenario, telemetry })
  const childRequests = () => stack.llm.requests.filter((request) => taskOf(request) === CHILD_TASK)
  return { ...stack, childRequests }
}

async function childOf(ctx: Context, parentId: string) {
  const summaries = await ctx.sessions.list()
  return summaries.filter((summary) => summary.parentSessionId === parentId && summary.parentCallId === 'c1')
}

const ofType = (events: readonly SessionEvent[], type: string) => events.filter((event) => event.type === type)
const count = (events: readonly SessionEvent[], type: string) => ofType(events, type).length

function resultOf(events: readonly SessionEvent[], callId: string) {
  const results = events.filter((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === callId)
  expect(results).toHaveLength(1)
  return eventData(results[0]!, 'tool/result')
}

const textOf = (result: { content: readonly { type: string; text?: string }[] }) => result.content.map((block) => block.text ?? '').join('')

/** Both logs keep every invariant: each call paired once, brackets balanced, seq contiguous. */
async function expectValid(ctx: Context, ...ids: string[]) {
  for (const id of ids) expect(validateSessionInvariants((await ctx.sessions.load(id)).events), `session ${id}`).toEqual([])
}

/** A parent killed while its child works, opened again here with telemetry; the repair runs told on it are recorded. */
async function killedMidChild() {
  const { sessions, parentId } = home()
  await killAt('child-running', { sessions, scenario: 'mid-child', mode: 'run', parentId })
  const stack = await resumeHere(sessions, 'mid-child', true)
  const [child] = await childOf(stack.root, parentId)
  if (!child) throw new Error('the killed parent left no child session')
  return { ...stack, parentId, child, told: repairRunsTold(stack.root) }
}

/** The repair runs told on `ctx` (lifecycle `agent/repair-start`/`-end`): phase, run id, end reason. */
function repairRunsTold(ctx: Context): [string, string, string | undefined][] {
  const told: [string, string, string | undefined][] = []
  ctx.on('agent/repair-start', (event) => { told.push(['start', event.identity.runId, undefined]) })
  ctx.on('agent/repair-end', (event) => { told.push(['end', event.identity.runId, event.reason]) })
  return told
}

/** The run the child's last turn names as its parent's. */
function lastParentRun(child: { events: readonly SessionEvent[] }): string {
  const runId = ofType(child.events, 'turn/start').map((event) => eventData(event, 'turn/start')).at(-1)?.parentRunId
  if (runId === undefined) throw new Error('the child has no turn that names its parent run')
  return runId
}

/** Resumes the parent, reads the call's one result, and lets the parent go on to its answer. */
async function resumeParent(ctx: Context, parentId: string) {
  const { agent, repaired } = await ctx.agents.resume(parentId)
  try {
    const result = resultOf(agent.session.events, 'c1')
    const next = await agent.continue()
    expect(next).toMatchObject({ reason: 'completed', text: 'Parent done.' })
    return { repaired, result }
  } finally {
    await agent.close()
  }
}

describe('a parent killed while its child works', () => {
  it('continues the interrupted child once from its log and gives the parent its answer', async () => {
    const { sessions, parentId } = home()
    const { root, childRequests } = await resumeHere(sessions, 'mid-child')
    await killAt('child-running', { sessions, scenario: 'mid-child', mode: 'run', parentId }, async () => {
      // While the process that runs them lives, neither the parent nor its child is taken from it.
      await expect(root.agents.resume(parentId)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
      const recovered = await root.tools.recover({
        callId: 'c1', name: 'subagent', arguments: JSON.stringify({ description: 'Research', prompt: CHILD_TASK }),
        signal: new AbortController().signal, context: { sessionId: parentId },
      })
      expect(recovered).toBeUndefined()
    })

    const [child] = await childOf(root, parentId)
    expect(child).toMatchObject({ status: 'needs-repair' })
    const { repaired, result } = await resumeParent(root, parentId)
    expect(repaired.recovered).toEqual([{ callId: 'c1', name: 'subagent', isError: false }])
    expect(repaired.paired).toEqual([])
    expect(result.isError).toBe(false)
    expect(textOf(result)).toContain(CHILD_ANSWER)
    expect(textOf(result)).toContain(`subagent session ${child!.id}`)

    // One continuation: the child's log holds its first turn (repaired) and one more; the model
    // was asked once, with the first turn's history (its probe call paired as outcome unknown).
    const { events } = await root.sessions.load(child!.id)
    expect(count(events, 'turn/start')).toBe(2)
    expect(childRequests()).toHaveLength(1)
    const history = childRequests()[0]!.messages
    expect(history.filter((message) => message.role === 'assistant')).toHaveLength(1)
    expect(resultOf(events, 'p1')).toMatchObject({ isError: true, code: 'TOOL_OUTCOME_UNKNOWN' })
    expect(await childOf(root, parentId)).toHaveLength(1)
    await expectValid(root, parentId, child!.id)

    // A second resume of the parent finds its log clean: the child is neither read nor run again.
    const again = await root.agents.resume(parentId)
    await again.agent.close()
    expect(again.repaired).toEqual({ paired: [], rerun: [], recovered: [] })
    expect(childRequests()).toHaveLength(1)
    expect(count((await root.sessions.load(child!.id)).events, 'turn/start')).toBe(2)
  }, 60_000)

  it('counts the child its resume continued in the run that resumes, not in no run', async () => {
    const { root, parentId, child, told } = await killedMidChild()
    const { agent } = await root.agents.resume(parentId)
    try {
      const next = await agent.continue()
      // The resume's repair asked the child's model once (CHILD_USAGE) for this run: its subagent spend.
      expect(next).toMatchObject({ reason: 'completed', usage: PARENT_USAGE, subagents: { usage: CHILD_USAGE } })
      expect(root.telemetry.cost(next.runId)).toMatchObject({
        own: { usage: PARENT_USAGE, attempts: 1 },
        children: { usage: CHILD_USAGE, attempts: 1 },
        total: { usage: { inputTokens: PARENT_USAGE.inputTokens + CHILD_USAGE.inputTokens, outputTokens: PARENT_USAGE.outputTokens + CHILD_USAGE.outputTokens }, attempts: 2 },
      })
      // The child's continued turn names that run as the one it worked for.
      const starts = ofType((await root.sessions.load(child.id)).events, 'turn/start').map((event) => eventData(event, 'turn/start'))
      expect(starts.at(-1)).toMatchObject({ parentRunId: next.runId, parentCallId: 'c1' })
    } finally {
      await agent.close()
    }
    // The turn took the run: no repair run of its own is told.
    expect(told).toEqual([])
  }, 60_000)

  it('counts the child its resume continued in a run of its own when the parent is closed before any turn', async () => {
    const { root, parentId, child, told } = await killedMidChild()
    const { agent } = await root.agents.resume(parentId)
    // Not yet: a turn may still take the run.
    expect(told).toEqual([])
    await agent.close()
    const runId = lastParentRun(await root.sessions.load(child.id))
    expect(told).toEqual([['start', runId, undefined], ['end', runId, 'completed']])
    expect(root.telemetry.cost(runId)).toMatchObject({ own: { attempts: 0 }, children: { usage: CHILD_USAGE, attempts: 1 }, total: { usage: CHILD_USAGE, attempts: 1 } })
  }, 60_000)

  it('counts the child a failed resume continued in the retry\'s first turn, once, and tells no run of its own', async () => {
    const { root, store, childRequests, parentId, child, told } = await killedMidChild()
    // The parent's log cannot be made durable once the child has been continued: the resume fails.
    const flush = store.flush.bind(store)
    store.flush = async (id) => {
      if (id === parentId && childRequests().length > 0) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
      return flush(id)
    }
    await expect(root.agents.resume(parentId)).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED' })
    const runId = lastParentRun(await root.sessions.load(child.id))
    // Not yet: a retry may still take the run.
    expect(told).toEqual([])
    // The retry finds the child done and asks it nothing; its first turn is the run the child worked for.
    store.flush = flush
    const { agent } = await root.agents.resume(parentId)
    try {
      const next = await agent.continue()
      expect(next).toMatchObject({ reason: 'completed', runId, usage: PARENT_USAGE, subagents: { usage: CHILD_USAGE } })
      expect(root.telemetry.cost(runId)).toMatchObject({ own: { usage: PARENT_USAGE, attempts: 1 }, children: { usage: CHILD_USAGE, attempts: 1 } })
    } finally {
      await agent.close()
    }
    expect(told).toEqual([])
    expect(childRequests()).toHaveLength(1)
  }, 60_000)

  it('continues from where the last recovery stopped when the resuming process is killed too', async () => {
    const { sessions, parentId } = home()
    await killAt('child-running', { sessions, scenario: 'killed-twice', mode: 'run', parentId })
    // The next process resumes the parent; its recovery continues the child, which stops again.
    await killAt('child-running', { sessions, scenario: 'killed-twice', mode: 'resume', parentId })

    const { root, childRequests } = await resumeHere(sessions, 'killed-twice')
    const [child] = await childOf(root, parentId)
    const { repaired, result } = await resumeParent(root, parentId)
    expect(repaired.recovered).toEqual([{ callId: 'c1', name: 'subagent', isError: false }])
    expect(textOf(result)).toContain(CHILD_ANSWER)

    // Three turns: the first, the killed continuation, this one — never a fresh start: the one
    // request made here carries both earlier probe calls.
    const { events } = await root.sessions.load(child!.id)
    expect(count(events, 'turn/start')).toBe(3)
    expect(count(events, 'user/message')).toBe(1)
    expect(childRequests()).toHaveLength(1)
    expect(childRequests()[0]!.messages.filter((message) => message.role === 'assistant')).toHaveLength(2)
    expect(resultOf(events, 'p2')).toMatchObject({ isError: true, code: 'TOOL_OUTCOME_UNKNOWN' })
    // The parent's log records one result for the call, from this resume; the killed one wrote none.
    await expectValid(root, parentId, child!.id)
  }, 60_000)
})

describe('a parent killed while its child works, the child\'s log needing a plugin not loaded', () => {
  it('does not tell the parent the child never started: its log is found, and the call is paired as of unknown outcome', async () => {
    const { sessions, parentId } = home()
    await killAt('child-running', { sessions, scenario: 'mid-child', mode: 'run', parentId })
    const { root } = await resumeHere(sessions, 'mid-child')
    const [child] = await childOf(root, parentId)
    if (!child) throw new Error('the killed parent left no child session')
    // An event of a plugin this process does not load, not written ignorable: open and load refuse the log.
    const file = join(sessions, `${child.id}.jsonl`)
    const last = JSON.parse(readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!) as SessionEvent
    appendFileSync(file, `${JSON.stringify({ seq: last.seq + 1, type: 'plans/step', time: last.time, data: { n: 1 } })}\n`)

    const { agent } = await root.agents.resume(parentId)
    try {
      const result = resultOf(agent.session.events, 'c1')
      expect(result).toMatchObject({ isError: true })
      expect(result.code).toBe('TOOL_OUTCOME_UNKNOWN')
    } finally {
      await agent.close()
    }
  }, 60_000)
})

describe('a parent killed before its child was stored', () => {
  it('pairs the call TOOL_NOT_STARTED (no child was stored, so none ran) and creates no child', async () => {
    const { sessions, parentId } = home()
    await killAt('child-creating', { sessions, scenario: 'before-child', mode: 'run', parentId, hold: 'child-create' })

    const { root, childRequests } = await resumeHere(sessions, 'before-child')
    const { repaired, result } = await resumeParent(root, parentId)
    // The intent was flushed before the tool body ran, so recover was asked: no child session, no work.
    expect(repaired.recovered).toEqual([{ callId: 'c1', name: 'subagent', isError: true }])
    expect(repaired.paired).toEqual([])
    expect(result).toMatchObject({ isError: true, code: 'TOOL_NOT_STARTED' })
    expect(await childOf(root, parentId)).toEqual([])
    // Besides the parent's files, only this process's store pid file (session-jsonl's locks link to
    // it): the killed parent's was swept.
    // What list() summarized is kept beside the logs (session-jsonl's .summaries.json): not a session.
    expect(readdirSync(sessions).filter((file) => !file.startsWith(parentId) && !file.startsWith(`.owner.lock.${process.pid}.`) && file !== '.summaries.json')).toEqual([])
    expect(childRequests()).toHaveLength(0)
    await expectValid(root, parentId)
  }, 60_000)
})

describe('a parent killed after its child completed', () => {
  it('takes the child\'s answer from its log without asking its model again', async () => {
    const { sessions, parentId } = home()
    await killAt('child-closed', { sessions, scenario: 'child-done', mode: 'run', parentId, hold: 'child-close' })

    const { root, childRequests } = await resumeHere(sessions, 'child-done')
    const [child] = await childOf(root, parentId)
    expect(child).toMatchObject({ status: 'completed' })
    const { repaired, result } = await resumeParent(root, parentId)
    expect(repaired.recovered).toEqual([{ callId: 'c1', name: 'subagent', isError: false }])
    expect(textOf(result)).toContain(CHILD_ANSWER)
    expect(childRequests()).toHaveLength(0)
    expect(count((await root.sessions.load(child!.id)).events, 'turn/start')).toBe(1)
    expect(existsSync(join(sessions, `${child!.id}.lock`))).toBe(false)
    await expectValid(root, parentId, child!.id)
  }, 60_000)
})

describe('a background child whose process was killed', () => {
  it('has its log closed by the time settled() resolves, so a host that ends at once (a refused rein resume) does not pull the store from under it', async () => {
    const { sessions, parentId } = home()
    await killAt('child-running', { sessions, scenario: 'background', mode: 'run', parentId })
    const { root } = await resumeHere(sessions, 'background')
    const [child] = await childOf(root, parentId)
    leftovers.push(Number(readFileSync(pidFile(pidFolder(sessions), child!.id, 'k1'), 'utf8')))
    const { agent } = await root.agents.resume(parentId)
    try {
      root.jobs.reap(parentId)
      await root.subagents.settled()
      expect((await root.sessions.load(child!.id)).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
    } finally {
      await agent.close()
    }
  }, 60_000)

  it('stops the command the child left running, by its tool\'s recover, when jobs reaps the job as lost', async () => {
    const { sessions, parentId } = home()
    await killAt('child-running', { sessions, scenario: 'background', mode: 'run', parentId })
    const { root } = await resumeHere(sessions, 'background')
    const [child] = await childOf(root, parentId)
    const pid = Number(readFileSync(pidFile(pidFolder(sessions), child!.id, 'k1'), 'utf8'))
    leftovers.push(pid)
    // The killed process's `sleep` outlived it.
    expect(runs(pid)).toBe(true)

    const { agent } = await root.agents.resume(parentId)
    try {
      root.jobs.reap(parentId)
      // The lost child's log is closed once its open call was settled.
      await vi.waitFor(async () => expect((await root.sessions.load(child!.id)).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } }), { timeout: 30_000 })
    } finally {
      await agent.close()
    }
    const { events } = await root.sessions.load(child!.id)
    // The tool's recover was asked: it stopped the command, and the call says so.
    expect(resultOf(events, 'k1')).toMatchObject({ isError: true, code: 'COMMAND_INTERRUPTED' })
    expect(runs(pid)).toBe(false)
    await expectValid(root, parentId, child!.id)
  }, 60_000)
})

/** Runs the gated fixture (`run`), letting every gate go until `gate`, where it is SIGKILLed. */
async function killAtGate(gate: string, args: { sessions: string; parentId: string }) {
  const child = spawnGated({ ...args, notes: join(args.sessions, '..', 'notes') }, 'run')
  spawned.push(child)
  const exited = once(child, 'exit')
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  onGates(child, (reached) => {
    if (reached === gate) child.kill('SIGKILL')
    else child.stdin.write('\n')
  })
  const [code, signal] = await exited as [number | null, string | null]
  if (signal !== 'SIGKILL') throw new Error(`the fixture ended (${code ?? signal}) before gate ${gate}:\n${err}`)
}

describe('a parent killed while its child streams an answer', () => {
  it('counts the cut-off attempt as an estimate, not as nothing, once the child\'s log is repaired', async () => {
    const { sessions, parentId } = home()
    // The child's first answer has begun to stream: its step is durable, its attempt not yet logged.
    await killAtGate('llm:child:0', { sessions, parentId })
    const { root } = await bootGatedStack({ root: sessions, notes: join(sessions, '..', 'notes') })
    const [child] = await childOf(root, parentId)
    expect(ofType((await root.sessions.load(child!.id)).events, 'llm/attempt')).toEqual([])

    const { agent } = await root.agents.resume(parentId)
    await agent.close()
    const { events } = await root.sessions.load(child!.id)
    // The first turn (closed by the repair) holds one attempt: the cut one, its input estimated.
    const firstTurn = events.slice(0, events.findIndex((event) => event.type === 'turn/end'))
    const [cut, ...others] = ofType(firstTurn, 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
    expect(others).toEqual([])
    expect(cut).toMatchObject({ provider: 'scripted', model: 'm', usageEstimated: true, failure: { code: 'ABORTED' }, usage: { outputTokens: 0 } })
    expect(cut!.usage!.inputTokens).toBeGreaterThan(0)
    expect(spending(events)).toMatchObject({ usageEstimated: true })
    await expectValid(root, parentId, child!.id)
  }, 60_000)
})
