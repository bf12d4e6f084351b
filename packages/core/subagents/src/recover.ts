/**
 * After a crash left a `subagent` call without a result: a child that completed its turn already
 * holds the answer in its log, so the call's result is read from there instead of running it again.
 */

import { eventData, type SessionEvent, type SessionService } from '@rein/session'
import type { SubagentResult } from './types.ts'

/** The completed child's answer for `callId`, or undefined (no child, or it did not complete). */
export async function recoverChild(sessions: SessionService | undefined, callId: string, parentSessionId: string | undefined): Promise<SubagentResult | undefined> {
  if (!sessions) return undefined
  const summaries = await sessions.list()
  const child = summaries.find((summary) => summary.parentCallId === callId && (parentSessionId === undefined || summary.parentSessionId === parentSessionId))
  if (!child) return undefined
  const { events } = await sessions.load(child.id)
  const answer = completedAnswer(events)
  if (answer === undefined) return undefined
  return { sessionId: child.id, answer, reason: 'completed', usage: child.usage, ...(child.cost === undefined ? {} : { cost: child.cost }) }
}

/** The text of the last assistant message, when the log's last turn ended `completed`. */
function completedAnswer(events: readonly SessionEvent[]): string | undefined {
  const end = events.findLast((event) => event.type === 'turn/end')
  if (!end || eventData(end, 'turn/end').reason !== 'completed') return undefined
  const last = events.findLast((event) => event.type === 'assistant/message' && event.seq < end.seq)
  if (!last) return ''
  return eventData(last, 'assistant/message').message.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('')
}
