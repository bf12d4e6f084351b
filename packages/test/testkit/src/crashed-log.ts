/** What a process killed mid-call leaves in a log, written by hand: for tests of repair and `recover`. */

import { assistantMessage, userMessage } from '@rein/llm'
import type { Session } from '@rein/session'

/** A call the model asked for in the open step, with its intent written (the body may have run). */
export interface OpenCall {
  callId: string
  name: string
  arguments?: string
  replaySafe?: boolean
}

/**
 * Appends turn `turn` (with `user` as its message) whose step asked for `calls` and wrote their
 * intents, and no results: the log a kill -9 during the tools leaves. Flush it yourself.
 */
export function appendOpenCalls(session: Session, calls: readonly OpenCall[], options: { turn?: number; user?: string; turnStart?: Record<string, string> } = {}): void {
  const turn = options.turn ?? 1
  session.append('turn/start', { turn, ...options.turnStart })
  session.append('user/message', { message: userMessage(options.user ?? 'go') })
  session.append('step/start', { turn, step: 1 })
  const blocks = calls.map((call) => ({ type: 'tool-call' as const, id: call.callId, name: call.name, arguments: call.arguments ?? '{}' }))
  session.append('assistant/message', { message: assistantMessage(blocks, { kind: 'model', provider: 'scripted', model: 'm' }), provider: 'scripted', model: 'm' })
  for (const call of calls) session.append('tool/call', { callId: call.callId, name: call.name, arguments: call.arguments ?? '{}', replaySafe: call.replaySafe ?? false })
}
