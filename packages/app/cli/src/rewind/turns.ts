/**
 * A session's turns as `rein show` numbers them, each with its anchor (the id of the user message
 * that started it, which checkpoints are recorded under), and `--to` resolved to one of them.
 */

import type { CheckpointService } from '@rein/checkpoint'
import { ReinError } from '@rein/base'
import { eventData, turnAnchor, type SessionEvent } from '@rein/session'

export interface SessionTurn {
  /** The `turn/start`'s `turn`: from 1, as `rein show` prints it. */
  turn: number
  /** The `turn/start`'s seq: a fork keeps the events before it. */
  seq: number
  /** The id of the user message the turn answers; absent when the log cannot say. */
  anchor?: string
}

export function sessionTurns(events: readonly SessionEvent[]): SessionTurn[] {
  const turns: SessionTurn[] = []
  events.forEach((event, index) => {
    if (event.type !== 'turn/start') return
    const data = eventData(event, 'turn/start')
    const anchor = turnAnchor(events, index)
    turns.push({ turn: data.turn, seq: event.seq, ...(anchor === undefined ? {} : { anchor }) })
  })
  return turns
}

/** The turn `--to` names, and the turn a rewind goes back before (they differ when `asked` continued `start`). */
export interface TurnChoice {
  asked: SessionTurn
  /** The first turn with the asked turn's anchor: a `continue` answers the same message as the turn it continues. */
  start: SessionTurn & { anchor: string }
}

/** `--to 2` or `--to <message id>` → the turn; `USAGE` naming what exists when it is not there. */
export function chooseTurn(sessionId: string, events: readonly SessionEvent[], to: string): TurnChoice {
  const turns = sessionTurns(events)
  const last = turns.at(-1)?.turn
  if (last === undefined) throw new ReinError('USAGE', `session ${sessionId} has no turns yet, so there is nothing to rewind`)
  const range = ` (turns 1 to ${last})`
  let asked: SessionTurn | undefined
  if (/^\d+$/.test(to)) {
    asked = turns.find((turn) => turn.turn === Number(to))
    if (!asked) throw new ReinError('USAGE', `session ${sessionId} has no turn ${to}; --to takes a turn number${range} or the id of a message that started a turn (rein show ${sessionId} numbers them)`)
  } else {
    asked = turns.find((turn) => turn.anchor === to)
    if (!asked) throw notATurnStart(sessionId, events, turns, to, range)
  }
  const anchor = asked.anchor
  if (anchor === undefined) throw new ReinError('USAGE', `turn ${asked.turn} of session ${sessionId} does not record which message started it, so no checkpoint names it`)
  const start = turns.find((turn) => turn.anchor === anchor) ?? asked
  return { asked, start: { ...start, anchor } }
}

/** Why message `to` names no turn: none has that id, or it is one inside a turn (the model's answer, a later user message). */
function notATurnStart(sessionId: string, events: readonly SessionEvent[], turns: readonly SessionTurn[], to: string, range: string): ReinError {
  const found = events.find((event) => messageIdOf(event) === to)
  if (!found) return new ReinError('USAGE', `session ${sessionId} has no message ${to}; --to takes a turn number${range} or the id of a message that started a turn`)
  const within = turns.findLast((turn) => turn.seq < found.seq)?.turn
  const kind = found.type === 'assistant/message' ? 'an assistant message' : 'a user message'
  const where = within === undefined ? `of session ${sessionId}, before its first turn` : `in turn ${within} of session ${sessionId}`
  const hint = within === undefined ? '' : ` (--to ${within} goes back before the turn it is in)`
  return new ReinError('USAGE', `message ${to} is ${kind} (${where}), not one that started a turn; --to takes a turn number${range} or the id of the user message that started a turn${hint}`)
}

function messageIdOf(event: SessionEvent): string | undefined {
  if (event.type === 'user/message') return eventData(event, 'user/message').message.id
  if (event.type === 'assistant/message') return eventData(event, 'assistant/message').message.id
  return undefined
}

/** The anchors from `start` on, each once, in turn order. */
export function anchorsFrom(events: readonly SessionEvent[], start: SessionTurn): string[] {
  const anchors = sessionTurns(events).filter((turn) => turn.turn >= start.turn).map((turn) => turn.anchor)
  return [...new Set(anchors.filter((anchor) => anchor !== undefined))]
}

/** How many files, and how many folders (made, or emptied and removed), a turn's checkpoints name. */
export interface TurnChanges {
  files: number
  folders: number
}

/**
 * For `rein show`: what each turn changed, by the first turn of each anchor: the distinct paths its
 * records name, however late they landed, files and folders apart (a folder a command made is not
 * one of its files, even where a file of that path came and went). A path a later turn changed again counts in both.
 */
export async function changesPerTurn(checkpoints: CheckpointService, sessionId: string, events: readonly SessionEvent[]): Promise<Map<number, TurnChanges>> {
  const firstTurn = new Map<string, number>()
  for (const turn of sessionTurns(events)) if (turn.anchor !== undefined && !firstTurn.has(turn.anchor)) firstTurn.set(turn.anchor, turn.turn)
  const paths = new Map<number, { files: Set<string>; folders: Set<string> }>()
  for (const record of await checkpoints.records(sessionId)) {
    const turn = firstTurn.get(record.anchor)
    if (turn === undefined) continue
    const seen = paths.get(turn) ?? { files: new Set<string>(), folders: new Set<string>() }
    seen[record.folder ? 'folders' : 'files'].add(JSON.stringify([record.root, record.path]))
    paths.set(turn, seen)
  }
  return new Map([...paths].map(([turn, seen]) => [turn, { files: seen.files.size, folders: seen.folders.size }]))
}
