/**
 * `validateSessionInvariants`: the properties every rein session log keeps, whatever happened —
 * crashes, cancellations, budgets, failures. Returns the violations found (empty when the log holds).
 */

import type { SessionEvent } from '@rein/session'

interface OpenStep {
  turn: number
  step: number
  requested: Map<string, string>
  results: Map<string, number>
  intents: Set<string>
}

export function validateSessionInvariants(events: readonly SessionEvent[]): string[] {
  const problems: string[] = []
  let turn: number | undefined
  let step: OpenStep | undefined
  let lastTurn = 0
  const at = (event: SessionEvent, problem: string) => problems.push(`#${event.seq} ${event.type}: ${problem}`)

  const closeStep = (event: SessionEvent) => {
    if (!step) return
    for (const [callId, name] of step.requested) {
      const count = step.results.get(callId) ?? 0
      if (count !== 1) at(event, `tool call ${callId} (${name}) has ${count} results in turn ${step.turn} step ${step.step}, expected exactly 1`)
    }
    for (const callId of step.results.keys()) {
      if (!step.requested.has(callId)) at(event, `result for ${callId}, which the model did not ask for in this step`)
    }
    step = undefined
  }

  events.forEach((event, index) => {
    if (event.seq !== index) at(event, `seq ${event.seq} at position ${index}`)
    const data = event.data as Record<string, unknown>
    switch (event.type) {
      case 'turn/start':
        if (turn !== undefined) at(event, `turn ${turn} is still open`)
        turn = data.turn as number
        if (turn !== lastTurn + 1) at(event, `turn ${turn} follows turn ${lastTurn}`)
        lastTurn = turn
        break
      case 'turn/end':
        if (turn === undefined) at(event, 'no turn is open')
        else if (data.turn !== turn) at(event, `closes turn ${String(data.turn)} but turn ${turn} is open`)
        if (step) at(event, `step ${step.step} is still open`)
        turn = undefined
        break
      case 'step/start':
        if (turn === undefined) at(event, 'outside a turn')
        if (step) at(event, `step ${step.step} is still open`)
        step = { turn: data.turn as number, step: data.step as number, requested: new Map(), results: new Map(), intents: new Set() }
        break
      case 'step/end':
        if (!step) at(event, 'no step is open')
        closeStep(event)
        break
      case 'assistant/message': {
        if (!step) at(event, 'outside a step')
        const message = data.message as { content: { type: string; id?: string; name?: string }[] }
        for (const block of message.content) {
          if (block.type === 'tool-call') step?.requested.set(block.id!, block.name!)
        }
        const usage = data.usage as { inputTokens: number; outputTokens: number; reasoningTokens?: number; cacheReadTokens?: number } | undefined
        if (usage) {
          const counts = [usage.inputTokens, usage.outputTokens, usage.reasoningTokens ?? 0, usage.cacheReadTokens ?? 0]
          if (counts.some((count) => !Number.isInteger(count) || count < 0)) at(event, 'usage counts must be non-negative integers')
          if ((usage.reasoningTokens ?? 0) > usage.outputTokens) at(event, 'reasoning tokens exceed output tokens')
        }
        if (data.interrupted && message.content.some((block) => block.type === 'tool-call')) at(event, 'an interrupted message carries a tool call')
        break
      }
      case 'tool/call':
        if (!step) at(event, 'outside a step')
        else if (!step.requested.has(data.callId as string)) at(event, `intent for ${String(data.callId)}, which the model did not ask for`)
        else step.intents.add(data.callId as string)
        break
      case 'tool/result': {
        if (!step) {
          at(event, 'outside a step')
          break
        }
        const callId = data.callId as string
        step.results.set(callId, (step.results.get(callId) ?? 0) + 1)
        break
      }
    }
  })
  const last = events.at(-1)
  if (last && step) at(last, `the log ends inside step ${step.step}`)
  if (last && turn !== undefined && !step) at(last, `the log ends inside turn ${turn}`)
  return problems
}
