/** What `list()` shows of a session, computed the same way by every store. */

import { addMoney } from '@rein/base'
import { addUsage, type TokenUsage } from '@rein/llm'
import { eventData } from './event-data.ts'
import { CORE_EVENT_TYPES, type SessionEvent, type SessionHeader, type TurnEndReason } from './events.ts'
import type { SessionStatus, SessionSummary } from './store.ts'

const TITLE_WORDS = 12
/**
 * A title is made of the message's first this many characters: a pasted file of a hundred MB makes
 * a title of its start, without splitting all of it into words (`list` of a log holding one took
 * seconds and GBs for it). Stores that read an over-long line in part keep at least this much of each string.
 */
export const TITLE_SCAN_CHARS = 4096
const CORE_TYPES: ReadonlySet<string> = new Set(CORE_EVENT_TYPES)

/** `running`: a live process holds the session (the store knows; a log cannot say). */
export function summarize(header: SessionHeader, events: readonly SessionEvent[], options: { running?: boolean } = {}): SessionSummary {
  const summarizer = new SessionSummarizer(header)
  for (const event of events) summarizer.add(event)
  return summarizer.summary(options)
}

/**
 * `summarize`, one event at a time: a store that reads a log a line at a time summarizes it without
 * holding its events (a log of a GB, or of one huge line, is listed in a small, bounded memory).
 */
export class SessionSummarizer {
  private title: string | undefined
  private turns = 0
  private open = false
  private lastEnd: TurnEndReason | undefined
  private model: string | undefined
  // Types a plugin wrote that were not marked ignorable: a log holding one opens only with that plugin loaded.
  private required: Set<string> | undefined
  private lastTime: string | undefined
  private readonly spent = new SpendingCounter()

  constructor(private readonly header: SessionHeader) {}

  /** Takes the log's next event, in order. */
  add(event: SessionEvent): void {
    if (event.type === 'turn/start') {
      this.turns++
      this.open = true
    } else if (event.type === 'turn/end') {
      this.open = false
      this.lastEnd = eventData(event, 'turn/end').reason
    } else if (event.type === 'request/header') this.model = eventData(event, 'request/header').model
    else if (event.type === 'assistant/message') this.model = eventData(event, 'assistant/message').model
    else if (this.title === undefined && event.type === 'user/message') this.title = titleOf(event.data)
    else if (event.ignorable !== true && !CORE_TYPES.has(event.type)) (this.required ??= new Set()).add(event.type)
    this.spent.add(event)
    this.lastTime = event.time
  }

  /** What `summarize` makes of the events taken so far; `running`: a live process holds the session. */
  summary(options: { running?: boolean } = {}): SessionSummary {
    const { header, title, model, required } = this
    const spent = this.spent.result()
    const status: SessionStatus = options.running ? 'running' : this.open ? 'needs-repair' : this.lastEnd ?? 'empty'
    return {
      id: header.id,
      createdAt: header.createdAt,
      cwd: header.cwd,
      ...(title ? { title } : {}),
      turns: this.turns,
      status,
      ...(model ? { model } : {}),
      usage: spent.usage,
      ...(spent.cost !== undefined ? { cost: spent.cost } : {}),
      ...(spent.usageEstimated ? { usageEstimated: true as const } : {}),
      lastActivity: this.lastTime ?? header.createdAt,
      ...(required ? { requires: [...required].sort() } : {}),
      depth: header.depth,
      ...(header.parentSessionId ? { parentSessionId: header.parentSessionId } : {}),
      ...(header.parentRunId ? { parentRunId: header.parentRunId } : {}),
      ...(header.parentCallId ? { parentCallId: header.parentCallId } : {}),
    }
  }
}

/**
 * Usage and money over the whole log, turn by turn: from a turn's `llm/attempt` records (failed
 * attempts included), or, for turns written before those existed, from its answers — so a session
 * begun by an older rein and resumed by this one counts both parts. Money is unknown once any part
 * with usage is unpriced. A fork counts from its `session/forked` on: what it copied was spent by
 * the session it came from.
 */
export function spending(events: readonly SessionEvent[]): Spending {
  const counter = new SpendingCounter()
  for (const event of events) counter.add(event)
  return counter.result()
}

/** `spending`, one event at a time. */
class SpendingCounter {
  private usage: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  private cost: number | undefined = 0
  private counted = false
  private estimated = false
  private attempts: Spent[] = []
  private answers: Spent[] = []

  add(event: SessionEvent): void {
    // A turn's parts end with it: attempts after its end (a compaction between turns) are a part of
    // their own, or an older turn counted from its answers would be counted from them instead.
    if (event.type === 'turn/start' || event.type === 'turn/end') this.closeTurn()
    else if (event.type === 'session/forked') {
      this.attempts = []
      this.answers = []
      this.usage = { inputTokens: 0, outputTokens: 0 }
      this.cost = 0
      this.counted = false
      this.estimated = false
    } else if (event.type === 'llm/attempt') this.attempts.push(spentOf(eventData(event, 'llm/attempt')))
    else if (event.type === 'assistant/message') this.answers.push(spentOf(eventData(event, 'assistant/message')))
  }

  /** What the events taken so far spent, the turn still open counted. */
  result(): Spending {
    const { usage, cost, counted, estimated } = this.withOpenTurn()
    return { usage, ...(counted && cost !== undefined ? { cost } : {}), ...(estimated ? { usageEstimated: true as const } : {}) }
  }

  private closeTurn(): void {
    const { usage, cost, counted, estimated } = this.withOpenTurn()
    this.usage = usage
    this.cost = cost
    this.counted = counted
    this.estimated = estimated
    this.attempts = []
    this.answers = []
  }

  /** The totals with the open turn's parts added; more events may follow, so `this` is left as it is. */
  private withOpenTurn(): { usage: TokenUsage; cost: number | undefined; counted: boolean; estimated: boolean } {
    let { usage, cost, counted, estimated } = this
    for (const part of this.attempts.length > 0 ? this.attempts : this.answers) {
      if (!part.usage) continue
      usage = addUsage(usage, part.usage)
      cost = cost === undefined || part.cost === undefined ? undefined : addMoney(cost, part.cost)
      counted = true
      estimated ||= part.usageEstimated === true
    }
    return { usage, cost, counted, estimated }
  }
}

/** Only what spending reads of an attempt or an answer: an answer's message (its text) is not kept for the turn. */
function spentOf(data: Spent): Spent {
  return { ...(data.usage ? { usage: data.usage } : {}), ...(data.cost !== undefined ? { cost: data.cost } : {}), ...(data.usageEstimated === true ? { usageEstimated: true as const } : {}) }
}

/** What a log spent: tokens, money when every part was priced, and whether part of the tokens was estimated. */
export interface Spending {
  usage: TokenUsage
  cost?: number
  usageEstimated?: true
}

type Spent = { usage?: TokenUsage; cost?: number; usageEstimated?: true }

function titleOf(data: unknown): string | undefined {
  const content = (data as { message?: { content?: { type?: string; text?: string }[] } }).message?.content ?? []
  const { text, cut } = textStart(content)
  const words = text.split(/\s+/).filter(Boolean)
  if (words.length === 0) return undefined
  return words.slice(0, TITLE_WORDS).join(' ') + (words.length > TITLE_WORDS || cut ? '…' : '')
}

/** The message's text blocks joined by spaces, up to TITLE_SCAN_CHARS; `cut` when there was more. */
function textStart(content: readonly { type?: string; text?: string }[]): { text: string; cut: boolean } {
  let text = ''
  for (const block of content) {
    if (block.type !== 'text') continue
    // Each piece sliced before it is joined: a huge block is never copied whole.
    text += (text === '' ? '' : ' ') + (block.text ?? '').slice(0, TITLE_SCAN_CHARS + 1)
    if (text.length > TITLE_SCAN_CHARS) return { text: text.slice(0, TITLE_SCAN_CHARS), cut: true }
  }
  return { text, cut: false }
}
