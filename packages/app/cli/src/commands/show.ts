/**
 * `rein show <id>`: a session, readably, turns with checkpoints marked. Never changes the
 * conversation: an interrupted turn is shown, not repaired.
 */

import type { Context } from '@deepseek-ai/cordis'
import { maskText, messageOf, ReinError, secretValues, shorten } from '@rein/base'
import { maskKeyShapes } from '../key-shapes.ts'
import type { Message } from '@rein/llm'
import { eventData, planRepair, type ContextCompacted, type CoreEventData, type SessionEvent, type SessionSummary } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { compactionLine, sessionStatusWord, turnEndWord } from '../render.ts'
import { changesPerTurn, type TurnChanges } from '../rewind/turns.ts'
import { resolveSessionId, withComposition } from '../session-command.ts'
import { jsonLine } from '../json-line.ts'
import { neutralize } from '../terminal-text.ts'
import { attemptLine, planSpend, spentText, totalLine, totalsRecord, type SpendPlan } from './show-spend.ts'

const SHORT = 200

export async function showCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [given] = args.positionals
  if (!given) throw new ReinError('USAGE', 'rein show needs a session id; rein sessions lists them')
  return withComposition(args.options, io, async ({ ctx }) => {
    const { header, events } = await ctx.sessions.load(await resolveSessionId(ctx, given))
    const id = header.id
    if (args.options.json) {
      io.stdout.write(`${jsonLine({ type: 'header', ...header })}\n`)
      for (const event of events) io.stdout.write(`${jsonLine(event)}\n`)
      io.stdout.write(`${jsonLine(totalsRecord(events))}\n`)
      return 0
    }
    io.stdout.write(`${neutralize(`session ${header.id} · created ${header.createdAt} · ${header.cwd}`)}\n`)
    const marks = await checkpointMarks(ctx, id, events)
    // Every stored session is read at most once, and only when needed.
    let listed: Promise<SessionSummary[]> | undefined
    const stored = () => (listed ??= ctx.sessions.list({ all: true }))
    // Only a log with tool calls can have started a subagent: others need no look at every session.
    const children = events.some((event) => event.type === 'tool/call') ? (await stored()).filter((session) => session.parentSessionId === id) : []
    const spend = planSpend(events)
    const waits = cutWaits(events)
    // What a server worded (an error it echoed a header into) may hold a secret the environment has.
    const secrets = secretValues(io.env)
    const unstarted = unstartedCalls(events)
    for (const event of events) {
      const asked = unstarted.get(event.seq)
      if (asked) io.stdout.write(`${neutralize(maskText(callLine(asked), secrets))}\n`)
      const line = describe(event, marks.changes, spend, waits)
      if (line !== undefined) io.stdout.write(`${neutralize(maskText(line, secrets))}\n`)
      const child = event.type === 'tool/call' ? childOfCall(children, eventData(event, 'tool/call')) : undefined
      if (child) io.stdout.write(`${neutralize(`    ↳ subagent session ${child.id} · ${sessionStatusWord(child.status)} · ${child.turns} turn${child.turns === 1 ? '' : 's'} · rein show ${child.id}`)}\n`)
    }
    const plan = planRepair(events, () => false)
    if (plan.turn !== undefined) io.stdout.write(`\n${openTurnNote(await stored(), header.id, plan.turn, plan.calls.length)}\n`)
    // Last: the line a reader checks against the session's row in `rein sessions`.
    io.stdout.write(`\n${totalLine(events, children.length > 0)}\n`)
    if (marks.missing) io.stderr.write(`${neutralize(`(checkpoints not shown: ${marks.missing})`)}\n`)
    return 0
  })
}

/** A turn the log leaves open: still running in a rein process that has the session open, else cut off. */
function openTurnNote(sessions: readonly SessionSummary[], id: string, turn: number, unpaired: number): string {
  const running = sessions.some((session) => session.id === id && session.status === 'running')
  if (running) return `(turn ${turn} is still running: the session is open in a rein process; show it again once the turn ends)`
  return `(turn ${turn} was interrupted with ${unpaired} tool call${unpaired === 1 ? '' : 's'} unpaired; rein resume ${id} repairs it)`
}

/** `  → name arguments` of a call, whether its intent was logged or only the model's asking for it. */
function callLine(call: { name: string; arguments: string }): string {
  // A key the model wrote into arguments matches no variable: masked by its shape, as run and chat mask it.
  return `  → ${call.name} ${maskKeyShapes(brief(call.arguments))}`
}

/**
 * The calls paired without running (a budget or a cancel came first: no `tool/call` in the log), by
 * the seq of their result, which is where `show` names them, from the answer that asked for them.
 */
function unstartedCalls(events: readonly SessionEvent[]): Map<number, { name: string; arguments: string }> {
  const asked = new Map<string, { name: string; arguments: string }>()
  const unstarted = new Map<number, { name: string; arguments: string }>()
  for (const event of events) {
    if (event.type === 'assistant/message') {
      for (const block of eventData(event, 'assistant/message').message.content) if (block.type === 'tool-call') asked.set(block.id, block)
    } else if (event.type === 'tool/call') {
      asked.delete(eventData(event, 'tool/call').callId)
    } else if (event.type === 'tool/result') {
      const { callId } = eventData(event, 'tool/result')
      const call = asked.get(callId)
      if (call) unstarted.set(event.seq, call)
      asked.delete(callId)
    }
  }
  return unstarted
}

/** The subagent session a call started, or the one it continued (`resume`). */
function childOfCall(children: readonly SessionSummary[], call: { callId: string; arguments: string }): SessionSummary | undefined {
  return children.find((child) => child.parentCallId === call.callId) ?? children.find((child) => child.id === resumedBy(call.arguments))
}

function resumedBy(args: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(args)
    return typeof parsed === 'object' && parsed !== null && 'resume' in parsed && typeof parsed.resume === 'string' ? parsed.resume : undefined
  } catch {
    return undefined
  }
}

/**
 * Files and folders with checkpoints per turn, from `ctx.checkpoints` when it is loaded (none
 * otherwise). Read through `ctx.sessions.reading`, not by opening the session: an open would claim
 * it (a `rein run --session` meanwhile would be refused) and cut a torn line off its log, and show
 * changes nothing. A session another process holds is read as it stands.
 */
async function checkpointMarks(ctx: Context, id: string, events: readonly SessionEvent[]): Promise<{ changes: ReadonlyMap<number, TurnChanges>; missing?: string }> {
  const checkpoints = ctx.get('checkpoints')
  if (!checkpoints) return { changes: new Map() }
  try {
    return { changes: await ctx.sessions.reading(id, () => changesPerTurn(checkpoints, id, events)) }
  } catch (error) {
    return { changes: new Map(), missing: messageOf(error) }
  }
}

function describe(event: SessionEvent, checkpoints: ReadonlyMap<number, TurnChanges>, spend: SpendPlan, waits: ReadonlyMap<number, WaitCut>): string | undefined {
  switch (event.type) {
    case 'turn/start': {
      const { turn } = eventData(event, 'turn/start')
      const changes = checkpoints.get(turn)
      return `\n── turn ${turn}${changes === undefined ? '' : `  [checkpoint: ${checkpointCount(changes)}]`}`
    }
    case 'user/message': {
      const { message } = eventData(event, 'user/message')
      // A plugin's message (a job's notice, a memory) is not something the person typed.
      return message.source.kind === 'plugin' ? `[${message.source.plugin}] ${text(message)}` : `> ${text(message)}`
    }
    case 'assistant/message': {
      const data = eventData(event, 'assistant/message')
      const said = text(data.message)
      const spent = spend.answers.get(event.seq)
      const usage = spent?.usage ? `  [${spentText(spent)} · ${data.provider}/${data.model}]` : ''
      return `${said ? said : '(no text)'}${data.interrupted ? ' [interrupted]' : ''}${usage}`
    }
    case 'tool/call':
      return callLine(eventData(event, 'tool/call'))
    case 'tool/result': {
      const data = eventData(event, 'tool/result')
      const body = data.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`)).join(' ')
      // The model reads a failure as `Error: <message>`; after `error CODE:` that would say it twice.
      const shown = data.isError ? body.replace(/^Error: /, '') : body
      return `  ← ${data.isError ? `error${data.code ? ` ${data.code}` : ''}: ` : ''}${brief(shown)}`
    }
    case 'turn/end': {
      const data = eventData(event, 'turn/end')
      const note = data.overrun ? ` (over budget: ${data.overrun.message})` : ''
      return `── ${turnEndWord(data.reason)}${data.error ? `: ${data.error.code}: ${data.error.message}` : ''}${note}`
    }
    case 'llm/retry':
      return retryLine(eventData(event, 'llm/retry'), waits.get(event.seq))
    case 'llm/fallback':
      return fallbackLine(eventData(event, 'llm/fallback'))
    case 'llm/attempt': {
      const shown = spend.attempts.get(event.seq)
      return shown ? attemptLine(shown.attempt, shown.summary, shown.unused) : undefined
    }
    case 'session/forked': {
      const { fromSessionId } = eventData(event, 'session/forked')
      return `══ forked from session ${fromSessionId}: what is above was spent there; this session's total counts from here`
    }
    case 'context/compacted': {
      // The model saw the summary and stubs from here on; the lines above stay as they were said.
      const data = eventData(event, 'context/compacted')
      return `══ ${compactionLine(data)}${data.summary ? summaryRangeLine(data.summary) : ''}`
    }
    default:
      return undefined
  }
}

/**
 * `  · retry 2 after SERVER (HTTP 500), waited 1.0 s · openai/m1 · <the provider's words>`: the
 * failure it followed, and the backoff. The record is written as the wait begins, with the delay
 * planned: a wait nothing followed says it was cut (`was to wait 20.0 s; the turn ended during the wait`).
 */
function retryLine(retry: CoreEventData['llm/retry'], cut: WaitCut | undefined): string {
  const seconds = `${(retry.delayMs / 1000).toFixed(1)} s`
  const wait = cut === undefined ? `waited ${seconds}` : `was to wait ${seconds}; ${cut === 'turn' ? 'the turn ended' : 'the log ends'} during the wait`
  return `  · retry ${retry.attempt} after ${failureText(retry.failure)}, ${wait} · ${retry.provider}/${retry.model} · ${brief(retry.failure.message)}`
}

/** What cut a retry's wait short: its turn's end (a kill then a resume's repair, a cancel), or the end of the log (a kill, or still waiting). */
type WaitCut = 'turn' | 'log'

/** Records only the request after a wait leaves: its resend mark, its attempt, its answer, its own failure's retry or fallback. */
const AFTER_WAIT: ReadonlySet<string> = new Set(['llm/resend', 'llm/attempt', 'assistant/message', 'llm/retry', 'llm/fallback'])

/** By the `llm/retry`'s seq: the retries whose wait no later attempt of the request followed. */
function cutWaits(events: readonly SessionEvent[]): ReadonlyMap<number, WaitCut> {
  const cut = new Map<number, WaitCut>()
  let waiting: number | undefined
  for (const event of events) {
    // A repair's interrupted answer is what an attempt before the wait showed, not a new attempt.
    const answered = event.type !== 'assistant/message' || eventData(event, 'assistant/message').interrupted !== true
    if (waiting !== undefined && AFTER_WAIT.has(event.type) && answered) waiting = undefined
    if (waiting !== undefined && (event.type === 'turn/end' || event.type === 'turn/start')) {
      cut.set(waiting, 'turn')
      waiting = undefined
    }
    if (event.type === 'llm/retry') waiting = event.seq
  }
  if (waiting !== undefined) cut.set(waiting, 'log')
  return cut
}

/** `  · fallback openai/m1 → other/m2 after SERVER (HTTP 500) · …`; a route skipped while it cools down says so. */
function fallbackLine(fallback: CoreEventData['llm/fallback']): string {
  const from = `${fallback.from.provider}/${fallback.from.model}`
  const why = fallback.cooldownUntil === undefined ? 'after' : `(${from} skipped: still cooling down) after`
  return `  · fallback ${from} → ${fallback.to.provider}/${fallback.to.model} ${why} ${failureText(fallback.failure)} · ${brief(fallback.failure.message)}`
}

/** `SERVER (HTTP 500)`: the failure's code, and its HTTP status when there was a response. */
function failureText(failure: CoreEventData['llm/retry']['failure']): string {
  return `${failure.code}${failure.status === undefined ? '' : ` (HTTP ${failure.status})`}`
}

/** `2 files`, `1 folder`, `1 file, 2 folders`: a folder a command made or removed is not one of the files. */
function checkpointCount({ files, folders }: TurnChanges): string {
  const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`
  return [files > 0 || folders === 0 ? counted(files, 'file') : undefined, folders > 0 ? counted(folders, 'folder') : undefined].filter((part) => part !== undefined).join(', ')
}

/** ` (events 3–40 summarized; the summary:)` and the summary, naming the message kept word for word if one was. */
function summaryRangeLine(summary: NonNullable<ContextCompacted['summary']>): string {
  const kept = summary.keptSeq !== undefined ? `, the request at event ${summary.keptSeq} kept word for word after it` : ''
  return ` (events ${summary.fromSeq}–${summary.toSeq} summarized${kept}; the summary:)\n${indent(summary.text)}`
}

function indent(text: string): string {
  return text.split('\n').map((line) => `   ${line}`).join('\n')
}

function text(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('').trim()
}

/** On one line, `SHORT` characters at most. */
function brief(value: string): string {
  return shorten(value.replace(/\s+/g, ' ').trim(), SHORT)
}
