/**
 * Runs, turns and anchors. A run is one `send` or `continue`; its turn's anchor is the id of the
 * user message that started the turn (for `continue`, the latest one a person wrote). A child run
 * (a subagent) takes its root run's anchor and conversation, so what it changes belongs to the turn
 * a person sees.
 */

import { randomFillSync } from 'node:crypto'
import type { Message } from '@rein/llm'
import type { RunIdentity } from '@rein/tools'

/** What a subagent's runs inherit from the run that created it. */
export interface ParentRun {
  sessionId: string
  runId: string
  /** The tool call that started the subagent. */
  callId: string
  /** The root run's anchor. */
  anchor: string
  /** The root session's id. */
  conversationId: string
  /** The parent's depth; the child's is one more. */
  depth: number
  /** The run is a repair's next run, not started yet: the child works for it first (see `RunIdentity.parentRunPending`). */
  pending?: boolean
}

/** Random bytes for run ids, drawn 64 ids at a time: one draw cost about 20 µs of every turn. */
const RUN_ID_BYTES = 12
const pool = Buffer.alloc(RUN_ID_BYTES * 64)
let used = pool.length

/** A new run's id: `run_` and 16 base64url characters, random. */
export function newRunId(): string {
  if (used === pool.length) {
    randomFillSync(pool)
    used = 0
  }
  const id = pool.toString('base64url', used, used + RUN_ID_BYTES)
  used += RUN_ID_BYTES
  return `run_${id}`
}

/** Stable across resumes: a turn is numbered within its session. */
function turnIdOf(sessionId: string, turn: number): string {
  return `${sessionId}/${turn}`
}

/** The id of the latest message a person wrote (plugin injections are not anchors). */
export function latestUserMessage(messages: readonly Message[]): string | undefined {
  return messages.findLast((message) => message.role === 'user' && message.source.kind === 'user')?.id
}

/** A run's identity. Without a user message yet (a `continue` on an empty log) the anchor is the run itself. */
export function runIdentity(input: { agent: string; sessionId: string; turn: number; runId: string; anchor: string | undefined; parent?: ParentRun }): RunIdentity {
  const { parent } = input
  return Object.freeze({
    agent: input.agent,
    sessionId: input.sessionId,
    conversationId: parent?.conversationId ?? input.sessionId,
    runId: input.runId,
    turnId: turnIdOf(input.sessionId, input.turn),
    anchor: parent?.anchor ?? input.anchor ?? input.runId,
    depth: parent ? parent.depth + 1 : 0,
    ...(parent ? { parentRunId: parent.runId, parentSessionId: parent.sessionId, parentCallId: parent.callId, ...(parent.pending ? { parentRunPending: true } : {}) } : {}),
  })
}
