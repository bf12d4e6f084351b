/**
 * A rewind's side of the conversation. Files change under the model's feet, so the rewound session
 * gets an ignorable `checkpoint/rewind` event (for people and tools reading the log) and a user
 * message from this plugin that the model reads with its next request. Nothing here starts a turn:
 * the message waits for the person's next one. Also: who may not be running while files are
 * rewound, and where a subagent's records go.
 */

import { randomUUID } from 'node:crypto'
import type { Context, Logger } from '@deepseek-ai/cordis'
import { isReinError, listedPath, ReinError, shorten, type JsonValue } from '@rein/base'
import { planRepair, repairEvents, type Session, type SessionService } from '@rein/session'
import type { RunIdentity } from '@rein/tools'
import type { CheckpointEntry, CheckpointRecord, FileChange, PlanItem, RewindResult } from './types.ts'

/** The plugin's name: the source of the message the model reads. */
const PLUGIN = '@rein/checkpoint'
/** The log event a rewind that changed files appends; ignorable, the model never sees it. */
const REWIND_EVENT = 'checkpoint/rewind'
/** Paths per outcome in the event; `counts` always has the totals. */
const EVENT_PATHS = 50
/** Paths per line in the model's message: enough to act on, short enough to read. */
const MESSAGE_PATHS = 20

/** What rewind reads of a live agent (`Agent` of @rein/agent). */
export interface LiveAgent {
  readonly status: 'idle' | 'running'
  readonly session: Session
  /** Set on a subagent: its conversation is its root session's. */
  readonly parent?: { readonly conversationId: string }
  inject(injection: { plugin: string; text: string }): void
}

/** Lets sessions hold `checkpoint/rewind` events while `ctx.sessions` is there. */
export function defineRewindEvent(ctx: Context): void {
  ctx.inject(['sessions'], (inner) => {
    inner.sessions.defineEvent(REWIND_EVENT, { ignorable: true })
  })
}

/**
 * Records a tool's change under the conversation's root session: a subagent's edits belong to its
 * root run's turn, so rewinding that turn undoes them too. Where the root session is not open here
 * (a child resumed on its own), a store that keeps records in session folders cannot reach it, and
 * the child's own session keeps them (under the same anchor) rather than the write being refused.
 */
export function recordInConversation(record: (sessionId: string, entry: CheckpointEntry) => Promise<CheckpointRecord>, identity: RunIdentity, change: FileChange): Promise<CheckpointRecord> {
  return inConversation(identity, (sessionId) => record(sessionId, { ...change, anchor: identity.anchor }))
}

/** Runs `act` on the session a run's records go to: its conversation's root, else (the root not open here) its own. */
export function inConversation<T>(identity: RunIdentity, act: (sessionId: string) => Promise<T>): Promise<T> {
  const { sessionId, conversationId } = identity
  const root = conversationId || sessionId
  return act(root).catch((error: unknown) => {
    if (root === sessionId || !isReinError(error, 'SESSION_NOT_OPEN')) throw error
    return act(sessionId)
  })
}

/**
 * A session of the conversation whose agent is running a turn: the session itself, or any of its
 * subagents' (their identity names it as their root). Only `find` is asked of an `agents` without `list`.
 */
export function runningIn(agents: { find(sessionId: string): LiveAgent | undefined; list?(): readonly LiveAgent[] } | undefined, sessionId: string): string | undefined {
  if (agents?.find(sessionId)?.status === 'running') return sessionId
  for (const agent of agents?.list?.() ?? []) {
    if (agent.status === 'running' && (agent.session.id === sessionId || agent.parent?.conversationId === sessionId)) return agent.session.id
  }
  return undefined
}

/** Where a rewind's notice goes: the live agent, a session held open for it, or nowhere. */
type NoticeTarget =
  | { readonly kind: 'agent'; readonly agent: LiveAgent }
  | { readonly kind: 'session'; readonly session: Session; readonly owned: boolean }
  | { readonly kind: 'none' }

/**
 * Finds where the notice will go before any file is touched, so a refusal changes nothing: the
 * session the caller holds, else the live agent's, else the stored session opened here (its lock
 * is the check against a run in another process; `owned`: closed by `releaseTarget`). No notice
 * without `ctx.sessions`, for a session the store does not have, or for one open in this process
 * that the caller did not pass (`ctx.sessions` hands out no open session: logged).
 */
export async function noticeTarget(ctx: Context, sessionId: string, agent: LiveAgent | undefined, given: Session | undefined, logger: Logger): Promise<NoticeTarget> {
  if (given !== undefined) {
    if (given.id !== sessionId) throw new ReinError('INVALID_REWIND', `rewind of session ${sessionId} was given the open session ${given.id}; pass the session being rewound`, { details: { sessionId, given: given.id } })
    if (given.closed) throw new ReinError('SESSION_CLOSED', `session ${sessionId} was closed before the rewind; pass an open one`, { details: { sessionId } })
    return { kind: 'session', session: given, owned: false }
  }
  // Anything less than an agent (a stand-in with a status only) cannot be told.
  if (typeof agent?.inject === 'function') return { kind: 'agent', agent }
  const sessions = ctx.get('sessions') as SessionService | undefined
  if (sessions === undefined) return { kind: 'none' }
  try {
    return { kind: 'session', session: await sessions.open(sessionId), owned: true }
  } catch (error) {
    if (isReinError(error, 'SESSION_NOT_FOUND') || isReinError(error, 'NO_SESSION_STORE')) return { kind: 'none' }
    if (isReinError(error, 'SESSION_LOCKED') && error.details?.pid === process.pid) {
      logger.warn('session %s is open in this process but was not passed to rewind: its files are rewound, the model is not told (pass it: rewind(sessionId, anchor, {session}))', sessionId)
      return { kind: 'none' }
    }
    throw busyError(sessionId, error)
  }
}

/** A lock another process holds: that process may be running a turn on the session. */
function busyError(sessionId: string, error: unknown): unknown {
  if (!isReinError(error, 'SESSION_LOCKED')) return error
  const pid = error.details?.pid
  const where = typeof pid === 'number' ? `process ${pid}` : 'another process'
  const lock = typeof error.details?.lock === 'string' ? ` (or delete ${error.details.lock} if that process is not rein)` : ''
  return new ReinError('SESSION_BUSY', `session ${sessionId} is open in ${where}; end or close it there, then rewind${lock}`, { cause: error, details: { sessionId, ...(typeof pid === 'number' ? { pid } : {}) } })
}

/** Closes a session `noticeTarget` opened; a failure is logged, the rewind's result stands. */
export async function releaseTarget(target: NoticeTarget, logger: Logger): Promise<void> {
  if (target.kind !== 'session' || !target.owned) return
  await target.session.close().catch((error: unknown) => logger.warn('session %s did not close cleanly after a rewind: %s', target.session.id, error))
}

/**
 * Tells the conversation what changed. Only when the model would otherwise be wrong about files:
 * something was restored, or files are back as before the turn and no notice for this anchor has
 * been given since the last turn (a rewind killed before its notice). A notice that cannot be
 * written is logged: the files are restored either way, and the caller has the result.
 */
export async function tellConversation(target: NoticeTarget, result: RewindResult, logger: Logger): Promise<void> {
  if (target.kind === 'none') return
  const session = target.kind === 'agent' ? target.agent.session : target.session
  if (result.restored.length === 0 && (result.already.length === 0 || toldSinceLastTurn(session.events, result.anchor))) return
  const turn = turnOf(session.events, result.anchor)
  const text = noticeText(result, turn)
  const data = rewindEventData(result, turn?.number)
  try {
    // An idle agent's log takes the message now, durably; one that started a turn meanwhile gets it
    // at its next step boundary (never between a call and its result).
    if (target.kind === 'agent' && (target.agent.status === 'running' || session.closed)) {
      target.agent.inject({ plugin: PLUGIN, text })
      if (!session.closed) {
        session.append(REWIND_EVENT, data, { ignorable: true })
        await session.flush()
      }
      return
    }
    closeInterruptedTurn(session)
    session.append(REWIND_EVENT, data, { ignorable: true })
    session.append('user/message', { message: pluginMessage(text) })
    await session.flush()
  } catch (error) {
    logger.warn('the rewind of session %s restored files but could not tell the conversation: %s', session.id, error)
  }
}

/**
 * A log that ends mid-turn (its process died) is closed the way a resume closes a call it cannot
 * run again, before the message goes in: a user message between a call and its result would break
 * the conversation. A later resume then finds the log clean.
 */
function closeInterruptedTurn(session: Session): void {
  for (const draft of repairEvents(planRepair(session.events, () => false))) session.append(draft.type, draft.data)
}

function pluginMessage(text: string): JsonValue {
  return { id: randomUUID(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: PLUGIN } }
}

interface SessionEventLike {
  readonly type: string
  readonly data: unknown
}

/** Whether the last `checkpoint/rewind` is for this anchor and no turn began after it. */
function toldSinceLastTurn(events: readonly SessionEventLike[], anchor: string): boolean {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'turn/start') return false
    if (event.type === REWIND_EVENT) return (event.data as { anchor?: unknown }).anchor === anchor
  }
  return false
}

/** The turn the anchor started, as the log has it: its number and the start of the person's message. */
function turnOf(events: readonly SessionEventLike[], anchor: string): { number?: number; quote?: string } | undefined {
  let number: number | undefined
  let quote: string | undefined
  for (const event of events) {
    if (number === undefined && event.type === 'turn/start') {
      const data = event.data as { turn?: number; anchor?: string }
      if (data.anchor === anchor) number = data.turn
    } else if (quote === undefined && event.type === 'user/message') {
      const { message } = event.data as { message: { id: string; content: readonly { type: string; text?: string }[] } }
      if (message.id === anchor) quote = clip(message.content.map((block) => (block.type === 'text' ? block.text ?? '' : '')).join(' '), 80)
    }
  }
  return number === undefined && quote === undefined ? undefined : { ...(number === undefined ? {} : { number }), ...(quote ? { quote } : {}) }
}

/**
 * The `checkpoint/rewind` event's data: the anchor, the turn number when the log has it, counts
 * per outcome, and the absolute paths restored, drifted and failed (at most 50 each).
 */
function rewindEventData(result: RewindResult, turn: number | undefined): JsonValue {
  const files = (items: readonly PlanItem[]) => items.slice(0, EVENT_PATHS).map((item) => item.file)
  return {
    anchor: result.anchor,
    ...(turn === undefined ? {} : { turn }),
    counts: {
      restored: result.restored.length, already: result.already.length, drifted: result.drifted.length,
      skipped: result.skipped.length, failed: result.failed.length, notCovered: result.notCovered.length,
    },
    restored: files(result.restored),
    drifted: files(result.drifted),
    failed: files(result.failed),
  }
}

/** The message the model reads: which files are back as before which turn, and which were left as they are. */
function noticeText(result: RewindResult, turn?: { number?: number; quote?: string }): string {
  const back = [...result.restored, ...result.already]
  const roots = new Set([...back, ...result.drifted, ...result.skipped, ...result.failed].map((item) => item.root))
  // A folder a command made is named as a folder, with its slash. A name with a line break in it is
  // quoted: it must not read as a line of this message.
  const name = (item: PlanItem) => listedPath(`${roots.size > 1 ? item.file : item.path}${item.folder ? '/' : ''}`)
  const which = turn?.quote ? `the turn that began with the user's message "${turn.quote}"${turn.number === undefined ? '' : ` (turn ${turn.number})`}`
    : turn?.number === undefined ? 'an earlier turn' : `turn ${turn.number}`
  const lines = [`Files were rewound to how they were before ${which}. The conversation above is unchanged, but what it says about these files no longer holds.`]
  // A file back to its content (or its mode), or an empty folder a command removed made again.
  const returned = (item: PlanItem) => item.before !== null || item.existed === true || item.modeOnly === true
  const restored = back.filter(returned).map((item) => `${name(item)}${modeBack(item)}`)
  // Folders made for those files went with them: the model should not expect them there either.
  const gone = (item: PlanItem) => (item.folders ?? []).filter((folder) => folder.action === 'remove' && folder.folder !== item.file).map((folder) => listedPath(`${roots.size > 1 ? folder.folder : folder.path}/`))
  // A folder made for several files is named once, after the first of them.
  const removed = [...new Set(back.filter((item) => !returned(item)).flatMap((item) => [name(item), ...gone(item)]))]
  // A file back as before but for its permissions (or whose permissions were all that changed) is told by them.
  const modeLeft = (item: PlanItem) => item.permissions?.action === 'keep' && (item.modeOnly === true || back.includes(item))
  const left = [
    ...back.filter(modeLeft).map((item) => `${name(item)} (${permissionsLeft(item)})`),
    ...result.drifted.map((item) => `${name(item)} (${modeLeft(item) ? permissionsLeft(item) : item.folder ? 'not empty' : 'changed since'})`),
    ...[...result.skipped, ...result.failed].map((item) => `${name(item)} (${modeLeft(item) ? permissionsLeft(item) : 'could not be restored'})`),
  ]
  if (restored.length > 0) lines.push(`Back as before that turn: ${list(restored)}`)
  if (removed.length > 0) lines.push(`Deleted, as they did not exist before that turn: ${list(removed)}`)
  if (left.length > 0) lines.push(`Not rewound, left as they are now: ${list(left)}`)
  if (result.notCovered.length > 0) lines.push(`Not covered by checkpoints, so not rewound: ${list(result.notCovered)}`)
  lines.push('Read a file again before relying on its content.')
  return lines.join('\n')
}

/** What a restored file's permissions did, after its name: given back, when they were. */
function modeBack(item: PlanItem): string {
  const to = item.permissions?.action === 'restore' ? item.permissions.to : undefined
  return to === undefined ? '' : ` (its permissions back to ${octal(to)})`
}

/** The permissions a rewind left as they are, and what they were before the turn when a record says. */
function permissionsLeft(item: PlanItem): string {
  const to = item.permissions?.to
  return to === undefined ? 'its permissions' : `its permissions, which were ${octal(to)} before that turn`
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0')
}

function list(names: readonly string[]): string {
  const shown = names.slice(0, MESSAGE_PATHS).join(', ')
  return names.length > MESSAGE_PATHS ? `${shown} and ${names.length - MESSAGE_PATHS} more` : shown
}

/** At most `max` characters, on one line. */
function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return shorten(line, max)
}
