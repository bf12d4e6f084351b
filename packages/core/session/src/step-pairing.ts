/**
 * Whether every closed step of a log pairs its calls: each tool call an answer asked for has one
 * result in its step, and each result answers one. Only the step a crash cut off may not, and
 * repair pairs that one; a request built from a closed step that does not is refused by every
 * provider, so such a log (changed by hand, by another program, or by an early rein that dropped
 * the calls of an answer cut off at its token limit) is refused when it is opened to go on with.
 */

import { ReinError } from '@rein/base'
import { eventData } from './event-data.ts'
import type { SessionEvent } from './events.ts'

/** Calls asked for and results given in the open step, by call id, each counted. */
interface Step {
  seq: number
  turn: number
  step: number
  asked: Map<string, { name: string; count: number }>
  answered: Map<string, number>
}

/** Throws `SESSION_CORRUPT` at the first `step/end` whose step does not pair its calls; `log` names the log. */
export function refuseUnpairedCalls(events: readonly SessionEvent[], log: string): void {
  let open: Step | undefined
  for (const event of events) {
    if (event.type === 'step/start') {
      const { turn, step } = eventData(event, 'step/start')
      open = { seq: event.seq, turn, step, asked: new Map(), answered: new Map() }
    } else if (open === undefined) {
      continue
    } else if (event.type === 'assistant/message') {
      for (const block of eventData(event, 'assistant/message').message.content) {
        if (block.type !== 'tool-call') continue
        const asked = open.asked.get(block.id)
        open.asked.set(block.id, { name: block.name, count: (asked?.count ?? 0) + 1 })
      }
    } else if (event.type === 'tool/result') {
      const { callId } = eventData(event, 'tool/result')
      open.answered.set(callId, (open.answered.get(callId) ?? 0) + 1)
    } else if (event.type === 'step/end') {
      const problem = unpaired(open)
      if (problem !== undefined) {
        throw new ReinError('SESSION_CORRUPT', `${log} has event #${event.seq} (step/end) closing step ${open.step} of turn ${open.turn}, in which ${problem}; only a step cut off by a crash may, and repair pairs that one; rein leaves the log as it is — repair it or move it out of the sessions folder`, {
          details: { seq: event.seq, type: event.type, stepSeq: open.seq },
        })
      }
      open = undefined
    }
  }
}

/** What a closed step's calls and results fail to pair, or undefined. */
function unpaired(step: Step): string | undefined {
  for (const [callId, { name, count }] of step.asked) {
    const results = step.answered.get(callId) ?? 0
    if (results !== count) return `tool call ${callId} (${name}) has ${results} result${results === 1 ? '' : 's'} for ${count} call${count === 1 ? '' : 's'}`
  }
  for (const [callId, results] of step.answered) {
    if (!step.asked.has(callId)) return `tool call ${callId} (asked for by no answer of the step) has ${results} result${results === 1 ? '' : 's'}`
  }
  return undefined
}
