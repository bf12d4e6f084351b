/**
 * `validateSessionInvariants`: the properties every rein session log keeps, whatever happened —
 * crashes, cancellations, budgets, failures. Returns the violations found (empty when the log holds).
 *
 * The invariants (the README lists them with their allowed exceptions):
 * 1. `seq` is contiguous from 0.
 * 2. Turns are numbered 1, 2, …, never nest, and each `turn/end` closes the open turn.
 * 3. Steps open and close inside a turn, never nest, and are closed before the turn ends.
 * 4. Answers (`assistant/message`), intents and results belong to an open step.
 * 5. Every tool call the model asked for in a step has exactly one result in that step, and every
 *    result answers a call of that step.
 * 6. A call has at most one intent (`tool/call`), written before its result. A result without an
 *    intent is allowed only for a call that never started (its code says so).
 * 7. No user message comes between a call and its result.
 * 8. An interrupted answer carries no tool call.
 * 9. Usage counts (on answers and attempt records) are non-negative integers; reasoning ⊂ output.
 * 10. The log ends outside any step and turn — a crashed log breaks this until it is repaired.
 */

import type { SessionEvent } from '@rein/session'

/** Results that may lack an intent: the call was paired without its body ever running. */
const NOT_STARTED = ['TOOL_NOT_STARTED', 'ABORTED_BEFORE_DISPATCH', 'BUDGET_EXCEEDED']

interface OpenStep {
  step: number
  requested: Map<string, string>
  results: Map<string, number>
  intents: Set<string>
}

type Report = (event: SessionEvent, problem: string) => void

export function validateSessionInvariants(events: readonly SessionEvent[]): string[] {
  const problems: string[] = []
  const report: Report = (event, problem) => problems.push(`#${event.seq} ${event.type}: ${problem}`)
  const state: { turn?: number; lastTurn: number; step?: OpenStep } = { lastTurn: 0 }
  events.forEach((event, index) => {
    if (event.seq !== index) report(event, `seq ${event.seq} at position ${index}`)
    check(event, event.data as Record<string, unknown>, state, report)
  })
  const last = events.at(-1)
  if (last && state.step) report(last, `the log ends inside step ${state.step.step}`)
  if (last && state.turn !== undefined && !state.step) report(last, `the log ends inside turn ${state.turn}`)
  return problems
}

function check(event: SessionEvent, data: Record<string, unknown>, state: { turn?: number; lastTurn: number; step?: OpenStep }, report: Report) {
  switch (event.type) {
    case 'turn/start':
      if (state.turn !== undefined) report(event, `turn ${state.turn} is still open`)
      state.turn = data.turn as number
      if (state.turn !== state.lastTurn + 1) report(event, `turn ${state.turn} follows turn ${state.lastTurn}`)
      state.lastTurn = state.turn
      return
    case 'turn/end':
      if (state.turn === undefined) report(event, 'no turn is open')
      else if (data.turn !== state.turn) report(event, `closes turn ${String(data.turn)} but turn ${state.turn} is open`)
      if (state.step) report(event, `step ${state.step.step} is still open`)
      state.turn = undefined
      return
    case 'step/start':
      if (state.turn === undefined) report(event, 'outside a turn')
      if (state.step) report(event, `step ${state.step.step} is still open`)
      state.step = { step: data.step as number, requested: new Map(), results: new Map(), intents: new Set() }
      return
    case 'step/end':
      if (!state.step) report(event, 'no step is open')
      else closeStep(event, state.step, report)
      state.step = undefined
      return
    case 'user/message': {
      const waiting = state.step && [...state.step.requested.keys()].find((callId) => !state.step?.results.has(callId))
      if (waiting) report(event, `between tool call ${waiting} and its result`)
      return
    }
    case 'assistant/message':
      if (!state.step) report(event, 'outside a step')
      answer(event, data, state.step, report)
      return
    case 'llm/attempt':
      checkUsage(event, data.usage, report)
      return
    case 'tool/call':
      intent(event, data.callId as string, state.step, report)
      return
    case 'tool/result':
      result(event, data, state.step, report)
  }
}

function answer(event: SessionEvent, data: Record<string, unknown>, step: OpenStep | undefined, report: Report) {
  const message = data.message as { content: { type: string; id?: string; name?: string }[] }
  for (const block of message.content) {
    if (block.type === 'tool-call' && block.id !== undefined) step?.requested.set(block.id, block.name ?? '')
  }
  checkUsage(event, data.usage, report)
  if (data.interrupted && message.content.some((block) => block.type === 'tool-call')) report(event, 'an interrupted message carries a tool call')
}

function intent(event: SessionEvent, callId: string, step: OpenStep | undefined, report: Report) {
  if (!step) report(event, 'outside a step')
  else if (!step.requested.has(callId)) report(event, `intent for ${callId}, which the model did not ask for`)
  else if (step.results.has(callId)) report(event, `intent for ${callId} after its result`)
  else if (step.intents.has(callId)) report(event, `a second intent for ${callId}`)
  else step.intents.add(callId)
}

function result(event: SessionEvent, data: Record<string, unknown>, step: OpenStep | undefined, report: Report) {
  if (!step) {
    report(event, 'outside a step')
    return
  }
  const callId = data.callId as string
  step.results.set(callId, (step.results.get(callId) ?? 0) + 1)
  if (step.requested.has(callId) && !step.intents.has(callId) && !NOT_STARTED.includes(data.code as string)) {
    report(event, `result for ${callId} without an intent; only a call that never started (${NOT_STARTED.join(', ')}) may have none`)
  }
}

function closeStep(event: SessionEvent, step: OpenStep, report: Report) {
  for (const [callId, name] of step.requested) {
    const count = step.results.get(callId) ?? 0
    if (count !== 1) report(event, `tool call ${callId} (${name}) has ${count} results in step ${step.step}, expected exactly 1`)
  }
  for (const callId of step.results.keys()) {
    if (!step.requested.has(callId)) report(event, `result for ${callId}, which the model did not ask for in this step`)
  }
}

function checkUsage(event: SessionEvent, value: unknown, report: Report) {
  if (value === undefined) return
  const usage = value as { inputTokens: number; outputTokens: number; reasoningTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number }
  const counts = [usage.inputTokens, usage.outputTokens, usage.reasoningTokens ?? 0, usage.cacheReadTokens ?? 0, usage.cacheWriteTokens ?? 0]
  if (counts.some((count) => !Number.isInteger(count) || count < 0)) report(event, 'usage counts must be non-negative integers')
  if ((usage.reasoningTokens ?? 0) > usage.outputTokens) report(event, 'reasoning tokens exceed output tokens')
}

/** What `checkedAgents` needs of an agent: its session's log, and a way to close it. */
export interface CheckedAgent {
  readonly session: { readonly id: string; readonly events: readonly SessionEvent[] }
  close(): Promise<void>
}

/**
 * Tracks the agents a test makes: after each test (`afterEach` is the test runner's) they are
 * closed, and the test fails naming every session whose log breaks an invariant.
 */
export function checkedAgents(afterEach: (hook: () => Promise<void>) => void): <A extends CheckedAgent>(agent: A) => A {
  const agents: CheckedAgent[] = []
  afterEach(async () => {
    const problems = agents.flatMap((agent) => validateSessionInvariants(agent.session.events).map((problem) => `session ${agent.session.id}: ${problem}`))
    await Promise.all(agents.splice(0).map((agent) => agent.close()))
    if (problems.length > 0) throw new Error(`session invariants broken:\n${problems.join('\n')}`)
  })
  return (agent) => {
    agents.push(agent)
    return agent
  }
}
