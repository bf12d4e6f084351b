/**
 * The two load runs, each from an empty temp root to a disposed stack and a closed server, returning
 * only plain figures: nothing of an agent or a log outlives the call (a suspended async function
 * keeps its locals alive, so measuring memory after the run inside the same function would count
 * what its own variables still hold).
 */

import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Agent } from '@rein/agent'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { startMockOpenAiServer, type MockServer, type RecordedRequest } from '@rein/testkit'
import type { Rng } from '../plan.ts'
import { checkLog, forgetLastMatch, mixedRequests } from './check.ts'
import { fdsAdded, openFds, peakRssMb, settledMemory, watchProcess, type MemorySample } from './probes.ts'
import { conversationScript, prompt, tokenFor } from './script.ts'
import { loadStack, type EchoMeter, type LoadStack } from './stack.ts'

/** Registers a cleanup that runs after the test, also when it fails part way. */
export type Defer = (cleanup: () => unknown) => void

/** Memory after a gc, with the logs' size and the open descriptors at that moment. */
type Sample = MemorySample & { logBytes: number; fds: number }

/** What the many-agents run counted. */
export interface AgentsOutcome {
  /** Turns that did not end `completed`, described. */
  failedTurns: string[]
  completedTurns: number
  crossTalk: string[]
  /** Logs that break an invariant, each with its problems. */
  invalid: string[]
  /** The same check, on another agent's log read as agent 0's: must find cross-talk (the check works). */
  swappedCrossTalk: number
  rejections: string[]
  warnings: string[]
  /** Descriptors open after dispose that were not before the run. */
  leaked: string[]
  /** Descriptors open before the run. */
  fdsBefore: number
  /** After each round, the first being the warm-up. */
  rounds: Sample[]
  peakRssMb: number
  calls: number
  results: number
  echo: Omit<EchoMeter, 'bySession'>
}

/** `agents` agents on one stack and one server, `turns` rounds of one turn each, all agents at once. */
export async function runAgents(options: { agents: number; turns: number; random: Rng; root: string; defer: Defer }): Promise<AgentsOutcome> {
  const { random, root, defer } = options
  const fdsBefore = openFds()
  const watch = watchProcess()
  defer(() => watch.stop())
  const server = await mockServer(defer)
  const stack = await stackOn(server, root, {}, defer)
  const tokens = Array.from({ length: options.agents }, (_, index) => tokenFor(index, random.next()))
  const agents: Agent[] = await Promise.all(tokens.map(() => stack.ctx.agents.create({ cwd: root })))
  const ids = agents.map((agent) => agent.session.id)
  const failedTurns: string[] = []
  const crossTalk: string[] = []
  let calls = 0
  const rounds: Sample[] = []
  for (let turn = 1; turn <= options.turns; turn++) {
    await Promise.all(agents.map(async (agent, index) => {
      const parallel = 2 + random.int(2)
      calls += parallel
      const result = await agent.send(prompt(tokens[index]!, turn, 1, parallel))
      if (result.reason !== 'completed') failedTurns.push(`${ids[index]} turn ${turn}: ${result.reason} ${result.error?.code ?? ''} ${result.error?.message ?? ''}`)
    }))
    crossTalk.push(...mixedRequests(takeRequests(server)))
    rounds.push({ ...await settledMemory(), logBytes: logBytes(root, ids), fds: openFds().length })
  }
  const peak = peakRssMb()
  await Promise.all(agents.splice(0).map((agent) => agent.close()))
  await stack.dispose()

  // Each log as a later process reads it: a fresh store, from disk.
  const store = new JsonlSessionStore({ root })
  const invalid: string[] = []
  let completedTurns = 0
  let results = 0
  for (const [index, id] of ids.entries()) {
    const check = checkLog(id, tokens[index]!, (await store.load(id)).events, readFileSync(join(root, `${id}.jsonl`), 'utf8'))
    crossTalk.push(...check.crossTalk.map((problem) => `${id}: ${problem}`))
    if (check.problems.length > 0) invalid.push(`${id}: ${check.problems.join('; ')}`)
    completedTurns += check.completedTurns
    results += check.results
  }
  const other = ids[1] ?? ids[0]!
  const swapped = checkLog(ids[0]!, tokens[0]!, (await store.load(other)).events, readFileSync(join(root, `${other}.jsonl`), 'utf8'))
  await store.dispose?.()
  forgetLastMatch()
  await server.close()
  const leaked = await leakedFds(fdsBefore)
  watch.stop()
  const { bySession: _bySession, ...echo } = stack.echo
  return {
    failedTurns, completedTurns, crossTalk, invalid, swappedCrossTalk: ids.length > 1 ? swapped.crossTalk.length : 1,
    rejections: watch.rejections, warnings: watch.warnings, leaked, fdsBefore: fdsBefore.length, rounds, peakRssMb: peak, calls, results, echo,
  }
}

/** What the long-session run counted. */
export interface LongOutcome {
  steps: number
  failedTurns: string[]
  problems: string[]
  resumeProblems: string[]
  crossTalk: string[]
  written: number
  resumedEvents: number
  /** Repairs the resume of the cleanly closed log made (paired, rerun, recovered calls, a closed turn). */
  repairs: number
  compactions: number
  logBytes: number
  rejections: string[]
  warnings: string[]
  leaked: string[]
  /** Every `sampleEvery` steps. */
  samples: (Sample & { steps: number })[]
}

/**
 * One session of `steps` steps (`stepsPerTurn - 1` tool steps and an answer per turn) in a window
 * small enough that it compacts again and again; then closed, resumed, closed, and loaded from disk.
 */
export async function runLongSession(options: { steps: number; stepsPerTurn: number; sampleEvery: number; random: Rng; root: string; defer: Defer }): Promise<LongOutcome> {
  const { root, defer } = options
  const fdsBefore = openFds()
  const watch = watchProcess()
  defer(() => watch.stop())
  const server = await mockServer(defer)
  const stack = await stackOn(server, root, { contextWindow: 16_000, maxSteps: options.stepsPerTurn + 10 }, defer)
  const token = tokenFor(0, options.random.next())
  const run = await longTurns(stack, server, token, options)

  const resumed = await resumeOnce(stack, run.id, token)
  await stack.dispose()
  const file = join(root, `${run.id}.jsonl`)
  const store = new JsonlSessionStore({ root })
  const check = checkLog(run.id, token, (await store.load(run.id)).events, readFileSync(file, 'utf8'))
  await store.dispose?.()
  forgetLastMatch()
  await server.close()
  const leaked = await leakedFds(fdsBefore)
  watch.stop()
  return {
    steps: check.steps, failedTurns: run.failedTurns, problems: check.problems, resumeProblems: resumed.problems, crossTalk: check.crossTalk,
    written: run.written, resumedEvents: resumed.events, repairs: resumed.repairs, compactions: run.compactions, logBytes: statSync(file).size,
    rejections: watch.rejections, warnings: watch.warnings, leaked, samples: run.samples,
  }
}

async function longTurns(stack: LoadStack, server: MockServer, token: string, options: { root: string; steps: number; stepsPerTurn: number; sampleEvery: number }) {
  const agent = await stack.ctx.agents.create({ cwd: options.root })
  const id = agent.session.id
  const file = join(options.root, `${id}.jsonl`)
  const failedTurns: string[] = []
  const samples: (Sample & { steps: number })[] = []
  let steps = 0
  for (let turn = 1; steps < options.steps; turn++) {
    const result = await agent.send(prompt(token, turn, options.stepsPerTurn - 1, 1))
    if (result.reason !== 'completed') failedTurns.push(`turn ${turn}: ${result.reason} ${result.error?.code ?? ''} ${result.error?.message ?? ''}`)
    // A turn that fails adds no steps, or too few: stop after a few rather than loop on.
    if (failedTurns.length > 3) break
    takeRequests(server)
    steps = agent.session.events.filter((event) => event.type === 'step/start').length
    if (Math.floor(steps / options.sampleEvery) > samples.length) {
      samples.push({ steps, fds: openFds().length, logBytes: statSync(file).size, ...await settledMemory() })
    }
  }
  const written = agent.session.events.length
  const compactions = agent.session.events.filter((event) => event.type === 'context/compacted').length
  await agent.close()
  return { id, failedTurns, samples, written, compactions }
}

async function resumeOnce(stack: LoadStack, id: string, token: string) {
  const { agent, repaired } = await stack.ctx.agents.resume(id)
  const events = agent.session.events.length
  const { problems } = checkLog(id, token, agent.session.events, '')
  await agent.close()
  const repairs = repaired.paired.length + repaired.rerun.length + repaired.recovered.length + (repaired.closedTurn !== undefined ? 1 : 0)
  return { events, problems, repairs }
}

async function mockServer(defer: Defer): Promise<MockServer> {
  const server = await startMockOpenAiServer(conversationScript)
  defer(() => server.close())
  return server
}

async function stackOn(server: MockServer, root: string, options: { contextWindow?: number; maxSteps?: number }, defer: Defer): Promise<LoadStack> {
  const stack = await loadStack({
    baseURL: server.url, root,
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
    ...(options.maxSteps !== undefined ? { agent: { maxSteps: options.maxSteps } } : {}),
  })
  let disposed: Promise<void> | undefined
  const dispose = () => (disposed ??= stack.dispose())
  defer(dispose)
  return { ...stack, dispose }
}

/**
 * The server keeps every request it got; hundreds of agents (or thousands of steps) would make that
 * the biggest thing in memory. The suite reads them, then lets them go.
 */
function takeRequests(server: MockServer): string[] {
  return (server.requests as RecordedRequest[]).splice(0).map((request) => request.raw)
}

/** Descriptors added since `before`, once the sockets the closed server and client leave have gone. */
async function leakedFds(before: readonly string[]): Promise<string[]> {
  let added = fdsAdded(before, openFds())
  // A closed socket's descriptor goes once its close is processed: a wait (10 s at most), not a timing check.
  for (let wait = 0; added.length > 0 && wait < 100; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    added = fdsAdded(before, openFds())
  }
  return added
}

function logBytes(root: string, ids: readonly string[]): number {
  return ids.reduce((sum, id) => sum + statSync(join(root, `${id}.jsonl`)).size, 0)
}
