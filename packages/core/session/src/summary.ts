/** What `list()` shows of a session, computed the same way by every store. */

import { addMoney } from '@rein/base'
import { addUsage, type TokenUsage } from '@rein/llm'
import { eventData } from './event-data.ts'
import { CORE_EVENT_TYPES, type SessionEvent, type SessionHeader, type TurnEndReason } from './events.ts'
import type { SessionStatus, SessionSummary } from './store.ts'

const TITLE_WORDS = 12
const CORE_TYPES: ReadonlySet<string> = new Set(CORE_EVENT_TYPES)

/** `running`: a live process holds the session (the store knows; a log cannot say). */
export function summarize(header: SessionHeader, events: readonly SessionEvent[], options: { running?: boolean } = {}): SessionSummary {
  let title: string | undefined
  let turns = 0
  let open = false
  let lastEnd: TurnEndReason | undefined
  let model: string | undefined
  // Types a plugin wrote that were not marked ignorable: a log holding one opens only with that plugin loaded.
  let required: Set<string> | undefined
  for (const event of events) {
    if (event.type === 'turn/start') {
      turns++
      open = true
    } else if (event.type === 'turn/end') {
      open = false
      lastEnd = eventData(event, 'turn/end').reason
    } else if (event.type === 'request/header') model = eventData(event, 'request/header').model
    else if (event.type === 'assistant/message') model = eventData(event, 'assistant/message').model
    else if (title === undefined && event.type === 'user/message') title = titleOf(event.data)
    else if (event.ignorable !== true && !CORE_TYPES.has(event.type)) (required ??= new Set()).add(event.type)
  }
  const spent = spending(events)
  const status: SessionStatus = options.running ? 'running' : open ? 'needs-repair' : lastEnd ?? 'empty'
  return {
    id: header.id,
    createdAt: header.createdAt,
    cwd: header.cwd,
    ...(title ? { title } : {}),
    turns,
    status,
    ...(model ? { model } : {}),
    usage: spent.usage,
    ...(spent.cost !== undefined ? { cost: spent.cost } : {}),
    ...(spent.usageEstimated ? { usageEstimated: true as const } : {}),
    lastActivity: events.at(-1)?.time ?? header.createdAt,
    ...(required ? { requires: [...required].sort() } : {}),
    depth: header.depth,
    ...(header.parentSessionId ? { parentSessionId: header.parentSessionId } : {}),
    ...(header.parentRunId ? { parentRunId: header.parentRunId } : {}),
    ...(header.parentCallId ? { parentCallId: header.parentCallId } : {}),
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
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  let cost: number | undefined = 0
  let counted = false
  let estimated = false
  let attempts: Spent[] = []
  let answers: Spent[] = []
  const closeTurn = () => {
    for (const part of attempts.length > 0 ? attempts : answers) {
      if (!part.usage) continue
      usage = addUsage(usage, part.usage)
      cost = cost === undefined || part.cost === undefined ? undefined : addMoney(cost, part.cost)
      counted = true
      estimated ||= part.usageEstimated === true
    }
    attempts = []
    answers = []
  }
  for (const event of events) {
    // A turn's parts end with it: attempts after its end (a compaction between turns) are a part of
    // their own, or an older turn counted from its answers would be counted from them instead.
    if (event.type === 'turn/start' || event.type === 'turn/end') closeTurn()
    else if (event.type === 'session/forked') {
      attempts = []
      answers = []
      usage = { inputTokens: 0, outputTokens: 0 }
      cost = 0
      counted = false
      estimated = false
    } else if (event.type === 'llm/attempt') attempts.push(eventData(event, 'llm/attempt'))
    else if (event.type === 'assistant/message') answers.push(eventData(event, 'assistant/message'))
  }
  closeTurn()
  return { usage, ...(counted && cost !== undefined ? { cost } : {}), ...(estimated ? { usageEstimated: true as const } : {}) }
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
  const text = content.filter((block) => block.type === 'text').map((block) => block.text ?? '').join(' ')
  const words = text.split(/\s+/).filter(Boolean)
  if (words.length === 0) return undefined
  return words.slice(0, TITLE_WORDS).join(' ') + (words.length > TITLE_WORDS ? '…' : '')
}
