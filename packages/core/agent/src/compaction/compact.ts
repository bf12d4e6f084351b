/**
 * One compaction: prune old tool results to stubs; if that does not bring the request under the
 * target, summarize the range before the kept turns (updating an earlier summary, never
 * summarizing it again). The result is one `context/compacted` event, written only once complete.
 */

import { isReinError, messageOf, ReinError } from '@rein/base'
import { messageTokens, toFailure, type LlmEvent, type LlmRuntime, type Message, type ModelRoute, type Tokenizer } from '@rein/llm'
import { applyCompaction, changesHistory, eventData, KEPT_NOTE, summaryMessage, SUMMARY_OPENING, type ContextCompacted, type CoreEventData, type Session, type SessionEvent } from '@rein/session'
import type { ToolRegistry, ToolSchema } from '@rein/tools'
import type { CompactionOptions } from '../options.ts'
import { closedAttempt } from '../closed-attempt.ts'
import { keepFailedAttempt, markResend } from '../resend.ts'
import { fileLedger, recallNote, withoutLedger } from './ledger.ts'
import { requestTokens } from './meter.ts'
import { deepen, isCut, isSummary, planPrune, summaryRange, tailStart, type Entry, type Pruned } from './plan.ts'
import { summaryInput, summaryOverhead, transcriptLine, writeSummary, type SummaryExchange, type SummaryInput, type SummaryOutcome } from './summarize.ts'

/** What the turn's budgets allow a summary request: its output limit, or why none may be sent. */
export type SummaryBudget = Pick<CompactionInput, 'summaryTokens' | 'summaryBlocked'>

export interface CompactionInput {
  session: Session
  llm: LlmRuntime
  tools: ToolRegistry
  /** The route that writes the summary. */
  route: ModelRoute
  options: CompactionOptions
  window: number
  tokens: Tokenizer
  system: string
  schemas: readonly ToolSchema[]
  /** The summary request's output budget: `summaryMaxTokens`, or less when the turn has less left. */
  summaryTokens: number
  /** Why no summary request may be sent now (the turn's budgets), if so: the compaction then prunes only. */
  summaryBlocked?: { code: string; message: string }
  /** Inside a turn: `summaryTokens` and `summaryBlocked` as the turn's budgets stand now, read again before a retry or fallback. */
  budget?: () => SummaryBudget
  /** The request's estimated tokens now. */
  before: number
  /**
   * The most the next request may hold for the turn to go on (a compaction before a step): past it
   * after pruning and summarizing, the most recent tool output is pruned too, down to the target.
   */
  mustFit?: number
  reason: 'auto' | 'manual' | 'overflow'
  instructions?: string
  signal: AbortSignal
  /** The summary request's attempts, for the caller to log and count, with what each asked. */
  onEvent: (event: LlmEvent, exchange: SummaryExchange) => void
}

/**
 * Writes the compaction and returns it — unwritten when it changed nothing (a summary that failed
 * with nothing to prune); undefined when there was nothing to prune or summarize at all.
 */
export async function compactContext(input: CompactionInput): Promise<ContextCompacted | undefined> {
  const { session, options, window, tokens } = input
  const entries = session.messageEntries()
  const keepTool = keptToolTokens(options, window)
  const target = options.target * window
  let pruned = planPrune(entries, tailStart(entries, options.keepTurns), keepTool, tokens)
  let afterPrune = input.before - saved(pruned)
  // The kept turns alone hold too much tool output (one long turn): only the most recent is kept whole.
  if (afterPrune > target) {
    pruned = planPrune(entries, entries.length, keepTool, tokens)
    afterPrune = input.before - saved(pruned)
  }
  const data: ContextCompacted = {
    reason: input.reason,
    ...(input.instructions ? { instructions: input.instructions } : {}),
    tokensBefore: input.before,
    tokensAfter: afterPrune,
    ...prunedParts(pruned),
  }
  // Asked for, or refused by the provider as too long: the estimate cannot be trusted to stop short.
  if (afterPrune > target || input.reason !== 'auto') await summarize(input, entries, data)
  // Stopped meanwhile (a cancel, a shutdown): nothing is written, the history stays as it was.
  if (input.signal.aborted) throw new ReinError('ABORTED', 'the compaction was stopped before it finished; nothing was changed')
  const fitted = input.mustFit === undefined ? undefined : pruneToFit(input, entries, data, input.mustFit)
  if (!changesHistory(data)) return data.summaryFailed ? data : undefined
  data.tokensAfter = fitted ?? tokensAfter(input, entries, data)
  session.append('context/compacted', data)
  await session.flush()
  return data
}

/** The most recent tool output a compaction keeps whole, in tokens: `keepToolTokens`, at most a quarter of the window. */
function keptToolTokens(options: CompactionOptions, window: number): number {
  return Math.min(options.keepToolTokens, Math.floor(window / 4))
}

/**
 * The most recent tool output kept whole when keeping `keptToolTokens` of it would leave the request
 * past what the turn may send: no more than the target. Otherwise a result between a low threshold
 * and `keepToolTokens` could be neither pruned nor summarized, and the turn ended `CONTEXT_FULL`
 * with the window far from full; pruned, it is recalled in parts of this size.
 */
export function tightToolTokens(options: CompactionOptions, window: number): number {
  return Math.min(keptToolTokens(options, window), Math.floor(options.target * window))
}

/** The reserve, at most a quarter of the window (a small window keeps room for some context). */
export function reserveOf(options: CompactionOptions, window: number): number {
  return Math.min(options.reserveTokens, Math.floor(window / 4))
}

/** The estimate past which `auto` compacts: the threshold, or the window less the reserve, whichever comes first. */
export function triggerOf(options: CompactionOptions, window: number): number {
  return Math.min(options.threshold * window, window - reserveOf(options, window))
}

/** What the next request will hold, computed the way the log will derive it. */
function tokensAfter(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted): number {
  const after = applyCompaction(entries, data, input.session.events.length).map((entry) => entry.message)
  return requestTokens(input.tokens, input.system, input.schemas, after)
}

/**
 * The last resort before `CONTEXT_FULL`: when the request is still past `limit`, the tool output
 * kept whole shrinks to `tightToolTokens` (a low threshold can sit below `keepToolTokens`). Results
 * are pruned as the model would see them after this compaction, so none a summary folds in is named.
 * Gives what the request then holds.
 */
function pruneToFit(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted, limit: number): number {
  const shown = applyCompaction(entries, data, input.session.events.length)
  const tokens = requestTokens(input.tokens, input.system, input.schemas, shown.map((entry) => entry.message))
  if (tokens <= limit) return tokens
  const more = planPrune(shown, shown.length, tightToolTokens(input.options, input.window), input.tokens)
  if (more.length === 0) return tokens
  const added = prunedParts(more)
  data.pruned = [...data.pruned, ...added.pruned]
  if (added.prunedArguments) data.prunedArguments = [...data.prunedArguments ?? [], ...added.prunedArguments]
  return tokensAfter(input, entries, data)
}

/** The event's lists of pruned results and arguments; the second only when there are any, as logs before it had none. */
function prunedParts(pruned: readonly Pruned[]): Pick<ContextCompacted, 'pruned' | 'prunedArguments'> {
  const entries = (part: Pruned['part']) => pruned.filter((entry) => entry.part === part).map(({ callId, name, chars }) => ({ callId, name, chars }))
  const prunedArguments = entries('arguments')
  return { pruned: entries('result'), ...(prunedArguments.length > 0 ? { prunedArguments } : {}) }
}

function saved(pruned: readonly { saves: number }[]): number {
  return pruned.reduce((sum, entry) => sum + entry.saves, 0)
}

/** Adds the summary to `data`, or why there is none; a range that would split a call is never chosen. */
async function summarize(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted): Promise<void> {
  // Someone asked to shorten the conversation now: the last turn is kept whole, however long it is.
  const asked = input.reason === 'manual'
  // When the kept turns and the last two answers leave nothing (a turn before this one whose own
  // call filled the window), the earlier turns go as a manual compaction would take them: else
  // every turn after it would fail the same way.
  const range = summaryRange(entries, asked ? 1 : input.options.keepTurns, !asked) ?? (asked ? undefined : summaryRange(entries, 1, false))
  const first = range && entries[range.from]
  if (!range || !first) return
  let plan = input.summaryBlocked ?? planSummary(input, entries, data, { ...range, first }, asked)
  if (!plan) return
  if ('code' in plan) {
    data.summaryFailed = plan
    return
  }
  let outcome = await sendSummary(input, plan)
  // The provider counts more than the tokenizer (CJK text, say): a smaller range may still fit.
  for (let tries = 0; !outcome.ok && outcome.code === CONTEXT_OVERFLOW && tries < SMALLER_RANGES && !input.signal.aborted; tries++) {
    const smaller = smallerPlan(input, entries, data, { ...range, first }, asked, plan)
    if (!smaller) break
    plan = smaller
    outcome = await sendSummary(input, plan)
  }
  if (!outcome.ok) {
    data.summaryFailed = { code: outcome.code, message: outcome.message }
    return
  }
  const shorter = (summary: { text: string }) => notShorter(input.tokens, summary.text, plan.replaced, plan.keptSeq !== undefined)
  let summary = withLedger(input, plan, outcome.text, true)
  // A summary barely shorter than its range goes without naming its results first.
  if (shorter(summary)) summary = withLedger(input, plan, outcome.text, false)
  const longer = shorter(summary)
  if (longer) data.summaryFailed = longer
  else data.summary = summary
}

/** The code a provider's refusal of a request as too long for its window maps to. */
const CONTEXT_OVERFLOW = 'CONTEXT_WINDOW_EXCEEDED'
/** How many times a summary request refused as too long is sent again, its transcript halved each time. */
const SMALLER_RANGES = 3

/**
 * The plan for a summary request after `refused` was refused as too long: a transcript of at most
 * half of `refused`'s. None when the turn's budgets allow no more requests or nothing smaller can be
 * read; the refusal then stands. None too when the refusal cannot be the transcript's: the request's
 * fixed part (the previous summary, the instructions, the room for the answer) is more than half the
 * summary route's window, so every smaller transcript would be refused as this one was.
 */
function smallerPlan(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted, range: { from: number; to: number; first: Entry }, asked: boolean, refused: SummaryPlan): SummaryPlan | undefined {
  if (input.budget?.().summaryBlocked) return undefined
  if (fixedPart(input, refused) > summaryWindow(input) / 2) return undefined
  const read = transcriptTokens(input, refused)
  const plan = planSummary(input, entries, data, range, asked, Math.floor(read / 2))
  if (!plan || 'code' in plan || plan.read.length === 0) return undefined
  // One no smaller than the refused (the range cannot be cut there) would be refused the same way.
  return transcriptTokens(input, plan) < read ? plan : undefined
}

/** What a summary request of `plan` holds besides its transcript, with the room for its answer. */
function fixedPart(input: CompactionInput, plan: SummaryPlan): number {
  return input.summaryTokens + summaryOverhead(input.tokens, plan.previous, input.instructions)
}

/** The tokens of `plan`'s transcript, as `planSummary` counts them. */
function transcriptTokens(input: CompactionInput, plan: SummaryPlan): number {
  return plan.read.reduce((sum, message) => sum + input.tokens(transcriptLine(message)) + 2, 0)
}

/** The summary request, made durable before it goes out, and closed in the log however it ends. */
async function sendSummary(input: CompactionInput, plan: SummaryPlan): Promise<SummaryOutcome> {
  const sent = summaryInput({
    ...(plan.previous ? { previous: plan.previous } : {}),
    messages: plan.read,
    ...(plan.requestUnread ? { requestUnread: true } : {}),
    ...(input.instructions ? { instructions: input.instructions } : {}),
  })
  try {
    await markSent(input, sent)
  } catch (error) {
    // Not sent: the mark, saved later with whatever follows, must not look like a request cut off.
    input.session.append('llm/attempt', unsent(input, { code: isReinError(error) ? error.code : 'SESSION_FLUSH_FAILED', message: messageOf(error) }), { ignorable: true })
    throw error
  }
  let attempted = false
  let blocked: SummaryBudget['summaryBlocked']
  const { budget } = input
  const outcome = await writeSummary({
    llm: input.llm,
    route: input.route,
    input: sent,
    maxTokens: input.summaryTokens,
    ...(budget ? { maxTokensCap: () => budget().summaryTokens } : {}),
    tokens: input.tokens,
    signal: input.signal,
    onEvent: (event, exchange) => {
      if (event.type === 'attempt') attempted = true
      input.onEvent(event, exchange)
      if (event.type === 'retry') keepFailedAttempt(input.session)
    },
    beforeResend: (next) => {
      // The failed attempts spent the turn's budgets too: once too little is left, nothing more is sent.
      blocked = budget?.().summaryBlocked
      if (blocked) return Promise.reject(new ReinError(blocked.code, blocked.message))
      return markResend(input.session, next)
    },
  })
  if (!attempted && !outcome.ok) input.session.append('llm/attempt', unsent(input, outcome), { ignorable: true })
  return blocked ? { ok: false, ...blocked } : outcome
}

/**
 * Makes the request durable before it goes out, as a step is: what the turn did since its last
 * request (a tool's result), and `summary/start`, which lets a repair count this request if a kill
 * cuts it off before its attempt is recorded. Its input is counted here, where the prompt is at
 * hand: the log does not keep the prompt.
 */
async function markSent(input: CompactionInput, sent: SummaryInput): Promise<void> {
  const { provider, model } = input.route
  const inputTokens = requestTokens(input.tokens, sent.system, [], sent.messages)
  input.session.append('summary/start', { request: { provider, model, maxTokens: input.summaryTokens }, inputTokens }, { ignorable: true })
  await input.session.flush()
}

/**
 * The record of a summary request that ended before any attempt reached a provider (stopped while
 * its log was saved, no adapter serving its route): nothing was spent, and without it its
 * `summary/start` would look cut off to a repair, which would charge it. No usage, so it counts 0.
 */
function unsent(input: CompactionInput, failure: Failure): CoreEventData['llm/attempt'] {
  const { provider, model } = input.route
  const stopped = input.signal.aborted
  const place = { provider, model, maxTokens: input.summaryTokens, retry: 0, fallback: 0 }
  return stopped
    ? closedAttempt(place, Date.now(), { code: 'ABORTED', message: `the summary request was stopped before it reached ${provider}/${model}` }, { finishReason: 'aborted' })
    : closedAttempt(place, Date.now(), toFailure(new ReinError(failure.code, failure.message)), { finishReason: 'error' })
}

type Failure = { code: string; message: string }

/** What the summary request reads and what its answer replaces: events `fromSeq`…`toSeq`, a previous summary first if any. */
interface SummaryPlan {
  fromSeq: number
  toSeq: number
  /** A person's message of the range kept word for word after the summary. */
  keptSeq?: number
  previous?: string
  /** The messages sent as the transcript, as the model sees them (freshly pruned results as stubs). */
  read: Message[]
  /** The kept request is left out of `read`: it alone is more than the summary request can read. */
  requestUnread?: true
  /** The messages the summary takes the place of, the previous summary included. */
  replaced: Message[]
}

/** Undefined when all the range would fold in is the request it keeps (a refusal right after a summary): nothing to summarize. */
function planSummary(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted, range: { from: number; to: number; first: Entry }, asked: boolean, most = Infinity): SummaryPlan | Failure | undefined {
  const { options, tokens } = input
  const previousEntry = isSummary(range.first.message) ? range.first : undefined
  const previous = previousEntry && previousText(previousEntry)
  // The transcript reads the freshly pruned results as the model will: as stubs.
  const seen = applyCompaction(entries, data, 0)
  // A kept tail that alone fills much of the target is cut deeper, so the next compaction is not at
  // the next step; not when asked for, which keeps the last turn whole.
  const end = asked ? range.to : deepen(seen, range.to, (options.target * input.window) / 2, tokens)
  // What the summary request can read besides its answer and instructions: the range ends earlier if need be.
  const window = summaryWindow(input)
  const free = window - input.summaryTokens - summaryOverhead(tokens, previous, input.instructions)
  if (free <= 0) return noRoom(input, window, previous)
  // `most`: a transcript of that size was refused as too long, so the range is cut shorter.
  const room = Math.min(free, most)
  const start = range.from + (previousEntry ? 1 : 0)
  const keeps = (to: number) => keptRequest(seen, start, to, (options.target * input.window) / 4, tokens, input.session.events)
  const read = readRange(seen, start, end, room, tokens, keeps)
  if ('over' in read) return tooBig(input, room, window, seen, read)
  const { to } = read
  const kept = keeps(to)
  const messages = (from: number) => seen.slice(from, to).map((entry) => entry.message)
  if (kept && messages(start).every((message) => message === kept.message)) return undefined
  const next = entries[to]
  const toSeq = next ? next.seq - 1 : input.session.events.length - 1
  return {
    fromSeq: range.first.seq,
    toSeq,
    ...(kept ? { keptSeq: kept.seq } : {}),
    ...(previous ? { previous } : {}),
    read: messages(read.from),
    ...(read.from > start ? { requestUnread: true } : {}),
    replaced: messages(range.from).filter((message) => message !== kept?.message),
  }
}

/**
 * The first messages of the range that do not fit the summary request, and whether the request kept
 * word for word comes before them; `withRequest`: they fit alone, but end the request's turn, so the
 * request, no longer kept, would have to be read with them.
 */
interface Unreadable {
  over: number
  afterKept: boolean
  withRequest?: true
}

/**
 * The transcript's part of the range `[start, end)`: as much as `room` holds. The request the
 * summary keeps word for word is read with the rest, unless all that fits is that request (or not
 * even it): the model reads it whole after the summary anyway, so the rest is then read without
 * it, ending where it is still kept (inside its turn).
 */
function readRange(seen: readonly Entry[], start: number, end: number, room: number, tokens: Tokenizer, keeps: (to: number) => Entry | undefined): { from: number; to: number } | Unreadable {
  const to = fitting(seen, start, end, room, tokens)
  const kept = (cut: number) => keeps(cut)?.seq === seen[start]?.seq
  // The range is the kept request alone (a refusal right after a summary): the caller finds nothing to summarize.
  if (end === start + 1 && kept(end)) return { from: start, to: end }
  if (to > start + 1 || (to === start + 1 && !kept(to))) return { from: start, to }
  const rest = fitting(seen, start + 1, end, room, tokens)
  const last = lastKeeping(seen, start + 2, rest, end, kept)
  if (last !== undefined) return { from: start + 1, to: last }
  if (!kept(start + 1)) return { over: start, afterKept: false }
  if (rest === start + 1) return { over: start + 1, afterKept: true }
  return to === start ? { over: start, afterKept: false } : { over: start + 1, afterKept: false, withRequest: true }
}

/** The latest cut in `[from, to]` (`end` counts as one) at which the request is still kept. */
function lastKeeping(seen: readonly Entry[], from: number, to: number, end: number, kept: (cut: number) => boolean): number | undefined {
  for (let cut = to; cut >= from; cut--) if ((cut === end || isCut(seen, cut)) && kept(cut)) return cut
  return undefined
}

/**
 * The person's message that stays word for word when the range `[from, to)` ends inside its turn:
 * the request the model is still working on, which a summary would leave only in its own words.
 * None when the range ends at a turn's start, when that message's turn completed before the cut (a
 * turn continued with news works on no request of its own), or when it alone is over `maxTokens`
 * (a pasted file: kept, it could leave no room for what the compaction must free).
 */
function keptRequest(entries: readonly Entry[], from: number, to: number, maxTokens: number, tokens: Tokenizer, events: readonly SessionEvent[]): Entry | undefined {
  const cut = entries[to]
  if (!cut || isByPerson(cut)) return undefined
  const request = entries.slice(from, to).findLast(isByPerson)
  if (!request || answeredBetween(events, request.seq, cut.seq)) return undefined
  return messageTokens(tokens, [request.message]) <= maxTokens ? request : undefined
}

/**
 * Whether a turn completed between two events: a request before it was answered. A turn cut off
 * (interrupted, out of budget) did not, and the turn that continues it still works on its request.
 */
function answeredBetween(events: readonly SessionEvent[], afterSeq: number, beforeSeq: number): boolean {
  return events.some((event) => event.seq > afterSeq && event.seq < beforeSeq && event.type === 'turn/end' && eventData(event, 'turn/end').reason === 'completed')
}

function isByPerson(entry: Entry): boolean {
  return entry.message.source.kind === 'user'
}

/** The summary route's window: it may be another, smaller model than the agent's. */
function summaryWindow(input: CompactionInput): number {
  return input.llm.resolveModel(input.route.provider, input.route.model)?.contextWindow ?? input.window
}

/** Why nothing of the range can be read: the request's other parts leave no room at all in the summary route's window. */
function noRoom(input: CompactionInput, window: number, previous: string | undefined): Failure {
  const { tokens, instructions } = input
  const taken = [
    ...(instructions ? [`the instructions given (about ${tokens(instructions)} tokens)`] : []),
    ...(previous ? [`the previous summary (about ${tokens(previous)} tokens)`] : []),
    `the summary request's own instructions (about ${summaryOverhead(tokens, undefined, undefined)} tokens)`,
    `room for its ${input.summaryTokens}-token answer`,
  ]
  const list = `${taken.slice(0, -1).join(', ')} and ${taken.at(-1) ?? ''}`
  return { code: 'SUMMARY_TOO_BIG', message: `no summary request was sent: the ${window}-token window of ${input.route.provider}/${input.route.model} has no room left for the conversation after ${list}${instructions ? '; give shorter instructions' : ''}` }
}

/** Why not even the first of the range's messages to summarize can be read: it alone (a call with its results), or with the request before it, is more than `room`. */
function tooBig(input: CompactionInput, room: number, window: number, seen: readonly Entry[], unreadable: Unreadable): Failure {
  const where = unreadable.afterKept ? ' after the request kept word for word' : ''
  const { provider, model } = input.route
  const { over } = unreadable
  const what = unreadable.withRequest ? `${firstPart(seen, over - 1, input.tokens)}, and the message after it, ${firstPart(seen, over, input.tokens)}, are together` : `${firstPart(seen, over, input.tokens)}, is`
  return { code: 'SUMMARY_TOO_BIG', message: `no summary request was sent: the first message to summarize${where}, ${what} more than the ${room} tokens the ${window}-token window of ${provider}/${model} leaves for the conversation; set compaction.summaryRoute to a model with a larger window, or start a new session` }
}

/** The message at `index` as the transcript reads it, with what cannot be parted from it (its call's results), and its size. */
function firstPart(seen: readonly Entry[], index: number, tokens: Tokenizer): string {
  let end = index + 1
  while (end < seen.length && !isCut(seen, end)) end++
  const size = seen.slice(index, end).reduce((sum, entry) => sum + tokens(transcriptLine(entry.message)) + 2, 0)
  const source = seen[index]?.message.source
  const kind = source?.kind === 'user' ? 'a person\'s message' : source?.kind === 'tool' ? 'a tool result' : source?.kind === 'plugin' ? `a message from ${source.plugin}` : 'an answer of the model'
  return `${kind}${end - index > 1 ? ' with its tool results' : ''}, about ${size} tokens`
}

/** The summary as written: the model's text, then the file ledger rebuilt from the log up to the range's end, then (`naming`: with their call ids) a note on the results it folds in. */
function withLedger(input: CompactionInput, plan: SummaryPlan, text: string, naming: boolean): NonNullable<ContextCompacted['summary']> {
  const { fromSeq, toSeq, keptSeq } = plan
  // The ledger stays a small part of the window: about 1/32 of it.
  const ledger = fileLedger(input.session.events, toSeq, (name) => input.tools.info(name)?.effects, Math.max(800, input.window / 8))
  const note = foldsResults(input.session.events, fromSeq, toSeq) ? `\n\n${recallNote(input.session.events, toSeq, naming ? Math.max(200, input.window / 16) : 0)}` : ''
  return { text: `${text}\n\n${ledger}${note}`, fromSeq, toSeq, ...(keptSeq !== undefined ? { keptSeq } : {}), provider: input.route.provider, model: input.route.model }
}

/** Whether events `fromSeq`…`toSeq` hold a tool result: a summary of talk alone needs no note about them. */
function foldsResults(events: readonly SessionEvent[], fromSeq: number, toSeq: number): boolean {
  return events.some((event) => event.seq >= fromSeq && event.seq <= toSeq && event.type === 'tool/result')
}

/** A summary no shorter than the messages it replaces would grow the request it is meant to shrink. */
function notShorter(tokens: Tokenizer, text: string, replaced: readonly Message[], keptAfter: boolean): Failure | undefined {
  const summary = messageTokens(tokens, [summaryMessage(text, 0, keptAfter)])
  const range = messageTokens(tokens, replaced)
  if (summary < range) return undefined
  return { code: 'SUMMARY_NOT_SHORTER', message: `the summary (about ${summary} tokens with its file list) is no shorter than the ${range} tokens of conversation it would replace` }
}

/** The latest cut at or before `to` whose transcript from `from` fits in `budget` tokens. */
function fitting(entries: readonly Entry[], from: number, to: number, budget: number, tokens: Tokenizer): number {
  let used = 0
  let best = from
  for (let index = from; index < to; index++) {
    if (index > from && isCut(entries, index)) best = index
    used += tokens(transcriptLine(entries[index]!.message)) + 2
    if (used > budget) return best
  }
  return to
}

/** A previous summary's text, without the opening the log adds. */
function previousText(entry: Entry): string {
  const text = entry.message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  const body = text.startsWith(SUMMARY_OPENING) ? text.slice(SUMMARY_OPENING.length).trimStart() : text
  return withoutLedger(body.startsWith(KEPT_NOTE) ? body.slice(KEPT_NOTE.length).trimStart() : body)
}
