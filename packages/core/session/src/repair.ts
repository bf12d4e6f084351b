/**
 * Crash repair, as a plan: what a log that ends mid-turn needs so that every tool call has exactly
 * one result and the turn is closed. Pure; nothing is written here. A resuming agent appends the
 * events (`repairEvents`) and re-runs what the plan marks `rerun`; a reader only looks.
 */

import type { Message } from '@rein/llm'
import { eventData } from './event-data.ts'
import type { CoreEventData, EventDraft, SessionEvent } from './events.ts'

/** What repair does for one unpaired tool call. */
export type RepairAction =
  /** The model asked for it, but no intent was written: it never started. */
  | 'not-started'
  /** An intent was written and no result: it may or may not have finished. */
  | 'outcome-unknown'
  /** As `outcome-unknown`, but safe to run again (replay-safe when recorded and now): run it once. */
  | 'rerun'

/** A tool call the model asked for that has no result, and what repair does for it. */
export interface RepairCall {
  callId: string
  name: string
  arguments: string
  action: RepairAction
}

/** What a log that ends mid-turn needs (`planRepair`): the open turn and step, and the calls to pair. */
export interface RepairPlan {
  /** The open turn; undefined when the log ends cleanly. */
  turn?: number
  /** The open step, to be closed after the results. */
  step?: { turn: number; step: number }
  /** Unpaired calls, in the order the model asked for them. */
  calls: RepairCall[]
}

type ToolResult = CoreEventData['tool/result']
type Requested = Omit<RepairCall, 'action'>

/**
 * `isReplaySafe(name)`: whether the tool as registered now says it is replay-safe. Only the open
 * step can hold unpaired calls (a step ends after its calls are paired), so pairing is scoped to
 * it; within it, calls and results pair in order, so a log whose ids repeat still repairs.
 */
export function planRepair(events: readonly SessionEvent[], isReplaySafe: (name: string) => boolean): RepairPlan {
  // A turn's start or end resets everything below: only the events from the last one matter, and a
  // long log is not walked whole on every resume.
  let from = events.length - 1
  while (from >= 0 && events[from]!.type !== 'turn/start' && events[from]!.type !== 'turn/end') from--
  if (from < 0 || events[from]!.type === 'turn/end') return { calls: [] }
  let turn: number | undefined
  let step: { turn: number; step: number } | undefined
  let open = new OpenStep()
  for (let i = from; i < events.length; i++) {
    const event = events[i]!
    switch (event.type) {
      case 'turn/start':
        turn = eventData(event, 'turn/start').turn
        step = undefined
        open = new OpenStep()
        break
      case 'turn/end':
        turn = undefined
        step = undefined
        open = new OpenStep()
        break
      case 'step/start': {
        const data = eventData(event, 'step/start')
        step = { turn: data.turn, step: data.step }
        open = new OpenStep()
        break
      }
      case 'step/end':
        step = undefined
        open = new OpenStep()
        break
      case 'assistant/message':
        open.requested.push(...toolCalls(eventData(event, 'assistant/message').message))
        break
      case 'tool/call': {
        const intent = eventData(event, 'tool/call')
        open.intents.set(intent.callId, [...(open.intents.get(intent.callId) ?? []), intent.replaySafe])
        break
      }
      case 'tool/result': {
        const { callId } = eventData(event, 'tool/result')
        open.results.set(callId, (open.results.get(callId) ?? 0) + 1)
        break
      }
    }
  }
  if (turn === undefined) return { calls: [] }
  return { turn, ...(step ? { step } : {}), calls: open.unpaired(isReplaySafe) }
}

/** The calls, intents and results of one step, counted per id so repeated ids pair in order. */
class OpenStep {
  readonly requested: Requested[] = []
  readonly intents = new Map<string, boolean[]>()
  readonly results = new Map<string, number>()

  unpaired(isReplaySafe: (name: string) => boolean): RepairCall[] {
    const seen = new Map<string, number>()
    const calls: RepairCall[] = []
    for (const call of this.requested) {
      const position = seen.get(call.callId) ?? 0
      seen.set(call.callId, position + 1)
      if (position < (this.results.get(call.callId) ?? 0)) continue
      const replaySafe = this.intents.get(call.callId)?.[position]
      if (replaySafe === undefined) calls.push({ ...call, action: 'not-started' })
      else calls.push({ ...call, action: replaySafe && isReplaySafe(call.name) ? 'rerun' : 'outcome-unknown' })
    }
    return calls
  }
}

/** True when the log needs no repair. */
export function isClean(plan: RepairPlan): boolean {
  return plan.turn === undefined
}

/**
 * The events that close the plan: a result per call in model order (from `rerunResults` for calls
 * that were run again), then `step/end` and `turn/end {reason: 'interrupted'}`.
 */
export function repairEvents(plan: RepairPlan, rerunResults: ReadonlyMap<string, ToolResult> = new Map()): EventDraft[] {
  if (plan.turn === undefined) return []
  const drafts: EventDraft[] = plan.calls.map((call) => ({
    type: 'tool/result',
    data: (rerunResults.get(call.callId) ?? synthesizedResult(call)) as never,
  }))
  if (plan.step) drafts.push({ type: 'step/end', data: plan.step })
  drafts.push({ type: 'turn/end', data: { turn: plan.turn, reason: 'interrupted' } })
  return drafts
}

function synthesizedResult(call: RepairCall): ToolResult {
  const unknown = call.action !== 'not-started'
  const text = unknown
    ? `Error: the session stopped while ${call.name} was running, so whether it finished is unknown. Check its effects before calling it again (for example, read back what it was meant to change).`
    : `Error: the session stopped before ${call.name} started; it did not run. Call it again if it is still needed.`
  return { callId: call.callId, content: [{ type: 'text', text }], isError: true, code: unknown ? 'TOOL_OUTCOME_UNKNOWN' : 'TOOL_NOT_STARTED' }
}

function toolCalls(message: Message): Requested[] {
  return message.content.flatMap((block) => (block.type === 'tool-call' ? [{ callId: block.id, name: block.name, arguments: block.arguments }] : []))
}
