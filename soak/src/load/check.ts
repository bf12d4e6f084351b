/**
 * The checks on one agent's log after the load: it holds the invariants, carries no other agent's
 * token, and every tool result is what its own call asked for, run for its own session.
 */

import type { SessionEvent } from '@rein/session'
import { validateSessionInvariants } from '@rein/testkit'
import { TOKEN_PATTERN, echoResult } from './script.ts'

/** What one log showed. */
export interface LogCheck {
  /** Invariant violations (`validateSessionInvariants`). */
  problems: string[]
  /** Things in this log that belong to another conversation, each described. */
  crossTalk: string[]
  /** Turns that ended `completed`. */
  completedTurns: number
  /** Tool results in the log. */
  results: number
  /** Steps (`step/start`) in the log. */
  steps: number
}

interface Block {
  type: string
  id?: string
  name?: string
  arguments?: string
  text?: string
}

/** Checks `events` (loaded from disk) and the file's raw `text` of the session `sessionId` owned by `token`. */
export function checkLog(sessionId: string, token: string, events: readonly SessionEvent[], text: string): LogCheck {
  const crossTalk: string[] = []
  const foreign = new Set([...text.matchAll(TOKEN_PATTERN)].map((match) => match[0]).filter((found) => found !== token))
  for (const other of foreign) crossTalk.push(`the log holds another agent's token ${other}`)
  const calls = new Map<string, string>()
  let completedTurns = 0
  let results = 0
  let steps = 0
  for (const event of events) {
    const data = event.data as Record<string, unknown>
    if (event.type === 'step/start') steps++
    if (event.type === 'turn/end' && data.reason === 'completed') completedTurns++
    if (event.type === 'assistant/message') {
      for (const block of (data.message as { content: Block[] }).content) {
        if (block.type === 'tool-call' && block.id !== undefined) calls.set(block.id, block.arguments ?? '')
      }
    }
    if (event.type === 'tool/result') {
      results++
      const callId = data.callId as string
      const args = calls.get(callId)
      const got = (data.content as Block[]).map((block) => block.text ?? '').join('')
      if (args === undefined) {
        crossTalk.push(`result for ${callId}, which no answer in this log asked for`)
        continue
      }
      const { token: argToken, turn, n } = JSON.parse(args) as { token: string; turn: number; n: number }
      const want = echoResult(argToken, turn, n, sessionId)
      if (data.isError === true || got !== want) crossTalk.push(`result for ${callId} is ${JSON.stringify(got)}, its call asked for ${JSON.stringify(want)}`)
    }
  }
  return { problems: validateSessionInvariants(events), crossTalk, completedTurns, results, steps }
}

/**
 * V8 keeps the subject of the last successful regular-expression match (`RegExp.lastMatch`, `$_`):
 * after `checkLog` that is a whole log file, which the memory measured afterwards would count. A
 * match on a one-character string lets it go.
 */
export function forgetLastMatch(): void {
  /./.exec('.')
}

/** Requests the server got whose bodies name more than one conversation's token (or none). */
export function mixedRequests(raws: readonly string[]): string[] {
  const mixed: string[] = []
  raws.forEach((raw, index) => {
    const tokens = new Set([...raw.matchAll(TOKEN_PATTERN)].map((match) => match[0]))
    if (tokens.size !== 1) mixed.push(`request #${index + 1} names ${tokens.size === 0 ? 'no token' : [...tokens].join(', ')}`)
  })
  return mixed
}
