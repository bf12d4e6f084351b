/**
 * Where a subagent sits in its tree, as its log and its parent's log record it: the parent run a
 * child session names, and the `turn/start` that holds a run's anchor and conversation.
 */

import { eventData, type SessionEvent, type SessionHeader } from '@rein/session'
import type { ParentRun } from './identity.ts'

/** Where a subagent comes from: the parent's session, the run and the tool call that start it. */
export interface ParentRef {
  sessionId: string
  runId: string
  callId: string
}

/**
 * A child session's place in its tree, read back on resume: the run and call its latest turn
 * worked for (a child resumed by a later call works for that one), else the header's; the
 * `turn/start` also records the root anchor and conversation it inherited.
 */
export function recordedParent(header: SessionHeader, events: readonly SessionEvent[]): ParentRun | undefined {
  const { parentSessionId } = header
  if (!parentSessionId || !header.parentRunId || !header.parentCallId) return undefined
  const start = events.findLast((event) => event.type === 'turn/start' && eventData(event, 'turn/start').parentRunId !== undefined)
  const data = start && eventData(start, 'turn/start')
  const runId = data?.parentRunId ?? header.parentRunId
  return {
    sessionId: parentSessionId,
    runId,
    // Logs from before turns named their call: the header's, for the run it names.
    callId: data?.parentCallId ?? header.parentCallId,
    anchor: data?.anchor ?? runId,
    conversationId: data?.conversationId ?? parentSessionId,
    depth: header.depth - 1,
  }
}

/** The `parent` a child session's header records, to create it again. */
export function parentOf(header: SessionHeader): { parent: ParentRef } | Record<string, never> {
  const { parentSessionId, parentRunId, parentCallId } = header
  return parentSessionId && parentRunId && parentCallId ? { parent: { sessionId: parentSessionId, runId: parentRunId, callId: parentCallId } } : {}
}

/** The `turn/start` of a run. */
export function findRunStart(events: readonly SessionEvent[], runId: string) {
  for (const event of events) {
    if (event.type !== 'turn/start') continue
    const data = eventData(event, 'turn/start')
    if (data.runId === runId) return data
  }
  return undefined
}

