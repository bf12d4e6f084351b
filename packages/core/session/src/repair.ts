/**
 * Crash repair, as a plan: what a log that ends mid-turn needs so that every tool call has exactly
 * one result and the turn is closed. Pure; nothing is written here. A resuming agent appends the
 * events (`repairEvents`) and re-runs what the plan marks `rerun`; a reader only looks.
 */

import type { Message } from '@rein/llm'
import type { CoreEventData, EventDraft, SessionEvent } from './events.ts'

export type RepairAction =
  /** The model asked for it, but no intent was written: it never started. */
  | 'not-started'
  /** An intent was written and no result: it may or may not have finished. */
  | 'outcome-unknown'
  /** As `outcome-unknown`, but safe to run again (replay-safe when recorded and now): run it once. */
  | 'rerun'

export interface RepairCall {
  callId: string
  name: string
  arguments: string
  action: RepairAction
}

export interface RepairPlan {
  /** The open turn; undefined when the log ends cleanly. */
  turn?: number
  /** The open step, to be closed after the results. */
  step?: { turn: number; step: number }
  /** Unpaired calls, in the order the model asked for them. */
  calls: RepairCall[]
}

type ToolResult = CoreEventData['tool/result']

/** `isReplaySafe(name)`: whether the tool as registered now says it is replay-safe. */
export function planRepair(events: readonly SessionEvent[], isReplaySafe: (name: string) => boolean): RepairPlan {
  let turn: number | undefined
  let step: { turn: number; step: number } | undefined
  let requested: { callId: string; name: string; arguments: string }[] = []
  const intents = new Map<string, CoreEventData['tool/call']>()
  const results = new Set<string>()
  for (const event of events) {
    switch (event.type) {
      case 'turn/start':
        turn = (event.data as CoreEventData['turn/start']).turn
        requested = []
        intents.clear()
        results.clear()
        break
      case 'turn/end':
        turn = undefined
        step = undefined
        break
      case 'step/start':
        step = event.data as CoreEventData['step/start']
        break
      case 'step/end':
        step = undefined
        break
      case 'assistant/message': {
        const { message } = event.data as unknown as CoreEventData['assistant/message']
        requested.push(...toolCalls(message))
        break
      }
      case 'tool/call': {
        const intent = event.data as CoreEventData['tool/call']
        intents.set(intent.callId, intent)
        break
      }
      case 'tool/result':
        results.add((event.data as unknown as ToolResult).callId)
        break
    }
  }
  if (turn === undefined) return { calls: [] }
  const calls = requested.filter((call) => !results.has(call.callId)).map((call): RepairCall => {
    const intent = intents.get(call.callId)
    if (!intent) return { ...call, action: 'not-started' }
    return { ...call, action: intent.replaySafe && isReplaySafe(call.name) ? 'rerun' : 'outcome-unknown' }
  })
  return { turn, ...(step ? { step } : {}), calls }
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

function toolCalls(message: Message) {
  return message.content.flatMap((block) => (block.type === 'tool-call' ? [{ callId: block.id, name: block.name, arguments: block.arguments }] : []))
}
