/**
 * `recall_result`: the model reads again, whole, a tool result a compaction pruned to a stub.
 * Offered only in a session that has been compacted, so other sessions' requests do not carry it.
 */

import { cutHead, ReinError } from '@rein/base'
import { eventData, type Session, type SessionEvent } from '@rein/session'
import { defineTool } from '@rein/tools'
import type { Tokenizer } from './meter.ts'

/** The run's agent, as far as a recall needs it. */
export interface RecallSource {
  session: Session
  /** How much of a result its context keeps whole; undefined when its model's window is not known. */
  room: () => RecallRoom | undefined
}

/** How much of a recalled result the context keeps, in tokens. */
export interface RecallRoom {
  tokens: Tokenizer
  /** A result past this alone would be pruned again before the next request: it is shown in parts. */
  whole: number
  /** The size of such a part: what a compaction keeps whole of the latest tool output. */
  part: number
}

/** `source(id)`: the live agent of a run (the one that made the call). */
export function recallResultTool(source: (sessionId: string) => RecallSource | undefined) {
  return defineTool({
    name: RECALL_TOOL,
    description: 'Shows again a tool result that was pruned from the conversation to save context. Its stub names the call id; use it only when you need that output again. A result too big to keep whole is shown in part, saying where it stopped; offset and max_chars show another part of it.',
    parameters: {
      call_id: { type: 'string', required: true, maxLength: 200, description: 'The call id the stub names.' },
      offset: { type: 'integer', minimum: 0, description: 'The first character to show (default 0).' },
      max_chars: { type: 'integer', minimum: 1, description: 'Show at most this many characters (default: all, or a first part of a result too big to keep whole).' },
    },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    isConcurrencySafe: true,
    execute: (args, run) => {
      const agent = run.sessionId === undefined ? undefined : source(run.sessionId)
      const events = agent?.session.events
      if (!agent || !events) throw new ReinError('NO_SESSION', 'recall_result reads the session of the agent that calls it; this call has none')
      const callId = recalledBy(events, args.call_id)
      const found = events.findLast((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === callId)
      if (!found) throw new ReinError('INVALID_ARGS', `no tool result with call id "${args.call_id}" in this session; the stub names it exactly`)
      const result = eventData(found, 'tool/result')
      const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n')
      if (args.offset !== undefined || args.max_chars !== undefined) return part(callId, text, args.offset ?? 0, args.max_chars ?? text.length)
      // Shown whole, it would be pruned again before the model reads it: a first part is read now instead.
      const room = agent.room()
      const size = room?.tokens(text)
      if (room && size !== undefined && size > room.whole) return firstPart(callId, text, size, room)
      const again = prunedRecall(events, callId)
      if (again) throw new ReinError('RESULT_TOO_BIG', `the result of ${callId} (${text.length} characters) does not fit in the context whole: recalled as ${again}, it was pruned again; recall a part of it with offset and max_chars (max_chars ${Math.ceil(text.length / 4)}, say), or get what you need with a narrower call of the tool that made it`)
      return result.isError ? `(that call failed)\n${text}` : text
    },
    summarize: (args) => `recalled ${args.call_id}`,
    // Offered once a compaction pruned something in the run's session: no schema to pay for before.
    availableTo: (identity) => source(identity.sessionId)?.session.compacted === true,
  })
}

/** The call a stub's id stands for: a pruned recall's stub names the recall, which showed another call's result. */
function recalledBy(events: readonly SessionEvent[], callId: string): string {
  const seen = new Set<string>()
  let id = callId
  while (!seen.has(id)) {
    seen.add(id)
    const target = recallTarget(events, id)
    if (target === undefined) return id
    id = target
  }
  return id
}

/** The call id a `recall_result` call asked for, if `callId` is one. */
function recallTarget(events: readonly SessionEvent[], callId: string): string | undefined {
  const call = events.find((event) => event.type === 'tool/call' && eventData(event, 'tool/call').callId === callId)
  if (!call || eventData(call, 'tool/call').name !== RECALL_TOOL) return undefined
  try {
    const args: unknown = JSON.parse(eventData(call, 'tool/call').arguments)
    const target = (args as { call_id?: unknown; offset?: unknown; max_chars?: unknown } | null)
    // A recall of a part showed only that part: its stub stands for itself.
    return typeof target?.call_id === 'string' && target.offset === undefined && target.max_chars === undefined ? target.call_id : undefined
  } catch {
    return undefined
  }
}

/**
 * An earlier whole recall of `callId` that a compaction pruned again: the result does not fit the
 * window whole, and recalling it once more would only be pruned again, step after step.
 */
function prunedRecall(events: readonly SessionEvent[], callId: string): string | undefined {
  const pruned = new Set<string>()
  for (const event of events) if (event.type === 'context/compacted') for (const entry of eventData(event, 'context/compacted').pruned) pruned.add(entry.callId)
  for (const id of pruned) if (id !== callId && recalledBy(events, id) === callId) return id
  return undefined
}

/**
 * The first part of a result too big for the context, as many characters as `room.part` tokens
 * hold, with how to read on: the model's first recall already gives it something it can keep.
 */
function firstPart(callId: string, text: string, size: number, room: RecallRoom): string {
  const header = (to: number) => `[characters 0–${to} of the ${text.length} of ${callId}'s result; too big to show whole (about ${size} tokens, more than the context keeps): recall the rest with {"call_id": "${callId}", "offset": ${to}, "max_chars": ${to}}, and on from there with offset and max_chars]\n`
  // The part and its header are what a compaction weighs: both must fit for the part to stay.
  const budget = Math.max(1, room.part - room.tokens(header(text.length)))
  let max = Math.max(1, Math.floor((text.length * budget) / size))
  // The tokenizer need not count evenly along the text: shrink until the part fits.
  while (max > 1 && room.tokens(cutHead(text, max)) > budget) max = Math.floor(max * 0.9)
  const shown = cutHead(text, max) || text.slice(0, 1)
  return `${header(shown.length)}${shown}`
}

/** Characters `[offset, offset + max)` of a recalled result, with where they are in it. */
function part(callId: string, text: string, offset: number, max: number): string {
  const from = Math.min(offset, text.length)
  const to = Math.min(text.length, from + max)
  return `[characters ${from}–${to} of the ${text.length} of ${callId}'s result]\n${text.slice(from, to)}`
}

const RECALL_TOOL = 'recall_result'

/**
 * An allow-list that also lets `recall_result` through: the stubs of a compacted session name it,
 * and it reads only the caller's own session, so no agent's list (a subagent profile's) must name it.
 */
export function withRecall(visible: ((name: string) => boolean) | undefined): ((name: string) => boolean) | undefined {
  return visible && ((name) => name === RECALL_TOOL || visible(name))
}
