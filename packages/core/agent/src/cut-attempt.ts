/**
 * A provider request a crash cut off. A request is made durable right before it is sent — a step's
 * with its `step/start`, a compaction's summary request with its `summary/start`, a retry or
 * fallback of either with its `llm/resend` — and its `llm/attempt` record is written only when the
 * attempt ends: a log whose last request mark has nothing after it that answers or closes it had a
 * request in flight, which the provider may well have billed. Repair records it as an estimate, so
 * it counts as more than nothing: its input (a step's counted from the request the log rebuilds, a
 * summary's as its mark counted it), its output from the last `llm/progress` mark after it (the
 * characters it had streamed by then, 4 a token), else unknown (0).
 *
 * Requests of one session go out one at a time, so only the last mark can be in flight: when a
 * summary request (a compaction between steps, say after a refusal for length) was cut off, it is
 * the one charged, never the step before it as well.
 */

import { inputTokens, type LlmRuntime, type TokenUsage } from '@rein/llm'
import { eventData, type CoreEventData, type Session, type SessionEvent, type StepRequest } from '@rein/session'
import type { ToolSchema } from '@rein/tools'
import { priceOf } from './attempts.ts'
import { closedAttempt } from './closed-attempt.ts'
import type { Tokenizer } from './compaction/meter.ts'
import type { LlmAttemptInput } from './lifecycle.ts'

type AttemptData = CoreEventData['llm/attempt']

/** A request the crash left in flight: the record to write, and what lifecycle listeners are told of it. */
export interface CutAttempt {
  record: AttemptData
  /** The step it was sent in; 0 for a summary request, as its live attempts are told. */
  step: number
  /** What it asked, as far as the log holds it: a step's request rebuilt; a summary's prompt is not in the log (no messages). */
  input: LlmAttemptInput
}

/** What estimating needs: the tokenizer the context meter counts with, and the catalog for its price. */
export interface AttemptEstimator {
  tokens: Tokenizer
  llm: () => LlmRuntime | undefined
}

/** The attempt to record for a request the crash left in flight, or undefined when none was. */
export async function cutOffAttempt(session: Session, estimator: AttemptEstimator): Promise<CutAttempt | undefined> {
  const { events } = session
  const found = unansweredRequest(events)
  if (!found) return undefined
  const { mark, at } = found
  const origin = mark.type === 'llm/resend' ? firstSending(events, at) : mark
  if (!origin) return undefined
  const first = origin.type === 'summary/start' ? cutSummary(origin) : cutStep(origin, session, estimator.tokens)
  if (!first) return undefined
  const cut = withStreamed(mark.type === 'llm/resend' ? resent(first, eventData(mark, 'llm/resend')) : first, streamedSince(events, at))
  const cost = await costOf(estimator.llm(), cut.request, cut.usage)
  return { record: attemptOf(cut, Date.parse(mark.time), cost), step: cut.step, input: cut.input }
}

/** A cut-off request: what it was sent with, its estimated usage, and why it is estimated. */
interface CutRequest {
  what: 'request' | 'summary request'
  request: StepRequest
  usage: TokenUsage
  message: string
  step: number
  input: LlmAttemptInput
  /** For a request sent again: its retry on its route and the route's place in the chain. */
  retry?: number
  fallback?: number
}

/**
 * Events after a request mark that say its request is over, or that the process went on past it
 * (where it would have recorded its attempt): an attempt, an answer, a step or turn boundary, a
 * compaction's outcome, a fork's copy ending. Anything else (another plugin's bookkeeping, a type a
 * newer rein writes) says nothing either way and is skipped.
 */
const ENDS_A_REQUEST: ReadonlySet<string> = new Set(['llm/attempt', 'assistant/message', 'step/end', 'turn/end', 'turn/start', 'context/compacted', 'session/forked'])

const MARKS: ReadonlySet<string> = new Set(['step/start', 'summary/start', 'llm/resend'])

/** The log's last request mark and where it is, when nothing after it ended its request. */
function unansweredRequest(events: readonly SessionEvent[]): { mark: SessionEvent; at: number } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const { type } = events[i]!
    if (MARKS.has(type)) return { mark: events[i]!, at: i }
    if (ENDS_A_REQUEST.has(type)) return undefined
  }
  return undefined
}

/** The characters the attempt in flight had streamed by its last `llm/progress` mark after its request's mark at `at`; 0 for none. */
function streamedSince(events: readonly SessionEvent[], at: number): number {
  for (let i = events.length - 1; i > at; i--) {
    const event = events[i]!
    if (event.type === 'llm/progress') return eventData(event, 'llm/progress').outputChars
  }
  return 0
}

/** The cut request with its output: counted from the characters it had streamed (4 a token, as `charTokens` counts), else said to be unknown. */
function withStreamed(cut: CutRequest, chars: number): CutRequest {
  if (chars === 0) return { ...cut, message: `${cut.message}, the output it had streamed is not known` }
  return {
    ...cut,
    usage: { ...cut.usage, outputTokens: Math.ceil(chars / 4) },
    message: `${cut.message}, the output it had streamed is counted from its last mark (${chars} characters)`,
  }
}

/** The mark of the first attempt of the request sent again at `at`: what it sends is the same. */
function firstSending(events: readonly SessionEvent[], at: number): SessionEvent | undefined {
  for (let i = at - 1; i >= 0; i--) {
    const { type } = events[i]!
    if (type === 'step/start' || type === 'summary/start') return events[i]
  }
  return undefined
}

/** The first attempt's estimate, for the route and place the request was sent again with. */
function resent(first: CutRequest, mark: CoreEventData['llm/resend']): CutRequest {
  return {
    what: first.what,
    request: mark.request,
    usage: first.usage,
    message: `rein was killed while this ${first.what} was sent again (retry ${mark.retry}, fallback ${mark.fallback}): its input tokens are estimated as its first attempt's`,
    step: first.step,
    input: first.input,
    retry: mark.retry,
    fallback: mark.fallback,
  }
}

/** A step's request, its input counted from what the log rebuilds; undefined for a log too old to say how it was sent. */
function cutStep(mark: SessionEvent, session: Session, tokens: Tokenizer): CutRequest | undefined {
  const { request, step } = eventData(mark, 'step/start')
  if (!request) return undefined
  const input = requestInput(session)
  return {
    what: 'request',
    request,
    usage: { inputTokens: inputTokens(tokens, input), outputTokens: 0 },
    message: 'rein was killed while this request was answered: its input tokens are estimated from the request',
    step,
    input,
  }
}

/** A summary request, its input as its mark counted it (the summary prompt is not in the log to count again). */
function cutSummary(mark: SessionEvent): CutRequest {
  const { request, inputTokens: input } = eventData(mark, 'summary/start')
  return {
    what: 'summary request',
    request,
    usage: { inputTokens: input, outputTokens: 0 },
    message: 'rein was killed while this summary request was answered: its input tokens are the estimate recorded when it was sent',
    step: 0,
    input: { messages: [] },
  }
}

/** The record: failed (`ABORTED`), usage estimated; when it ended is not known either, so it is dated from its mark. */
function attemptOf(cut: CutRequest, at: number, cost: number | undefined): AttemptData {
  const place = { ...cut.request, retry: cut.retry ?? 0, fallback: cut.fallback ?? 0 }
  return closedAttempt(place, at, { code: 'ABORTED', message: cut.message }, cost === undefined ? { usage: cut.usage } : { usage: cut.usage, cost })
}

/** The step's request as the log rebuilds it: the last system text and tool schemas written, the messages. */
function requestInput(session: Session): LlmAttemptInput {
  const { events } = session
  const system = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').system !== undefined)
  const tools = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').tools !== undefined)
  const systemText = system ? eventData(system, 'request/header').system : undefined
  const toolList = tools ? eventData(tools, 'request/header').tools : undefined
  return {
    ...(systemText !== undefined ? { system: systemText } : {}),
    messages: session.messages(),
    ...(isToolSchemaList(toolList) && toolList.length > 0 ? { tools: toolList } : {}),
  }
}

/** The tool schemas a header wrote, as a listener reads them: each with a name, a description and parameters. */
function isToolSchemaList(value: unknown): value is ToolSchema[] {
  return Array.isArray(value) && value.every((tool: unknown) => typeof tool === 'object' && tool !== null
    && typeof (tool as Partial<ToolSchema>).name === 'string' && typeof (tool as Partial<ToolSchema>).description === 'string'
    && typeof (tool as Partial<ToolSchema>).parameters === 'object')
}

/** Its price; undefined when the model is unpriced or its catalog cannot be had. */
async function costOf(llm: LlmRuntime | undefined, route: { provider: string; model: string }, usage: TokenUsage): Promise<number | undefined> {
  if (!llm) return undefined
  // A resume has looked its routes up already; closing a lost child has not.
  await llm.modelInfo(route.provider, route.model).catch(() => undefined)
  return priceOf(llm, route, usage)
}
