/**
 * The context meter: how many input tokens the next request will be, before it is sent. The last
 * answered request's reported input (this process's, or for a resumed session its log's), plus an
 * estimate of what was appended or changed since; the whole request estimated when there is no
 * report to start from (a compaction, a log with none).
 */

import { charTokens, inputTokens, messageTokens, type Message, type Tokenizer, type TokenUsage } from '@rein/llm'
import { eventData, type Session, type SessionEvent } from '@rein/session'
import type { ToolSchema } from '@rein/tools'

export type { Tokenizer }

/**
 * `tokenizer`'s counts as whole, non-negative numbers, as the log records them: rounded up; the
 * character heuristic for a text it gives no such count for (NaN, a negative, not a number).
 */
export function wholeTokens(tokenizer: Tokenizer): Tokenizer {
  return (text) => {
    const count = tokenizer(text)
    return Number.isFinite(count) && count >= 0 ? Math.ceil(count) : charTokens(text)
  }
}

/** Tokens of a whole request: system text, tool schemas and messages. */
export function requestTokens(tokens: Tokenizer, system: string, schemas: readonly ToolSchema[], messages: readonly Message[]): number {
  return inputTokens(tokens, { system, tools: schemas, messages })
}

/** Total input of a reported usage (cached parts included). */
function inputOf(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
}

/**
 * A usage the meter can start from. A provider that says it read no input (some servers send
 * zeros) read something all the same: trusted, its figure would keep compaction off for good.
 */
function isReport(usage: TokenUsage | undefined): usage is TokenUsage {
  return usage !== undefined && inputOf(usage) > 0
}

/**
 * The last answered request: its reported input, and what it was sent with. The tools are the list
 * itself, or their JSON as a `request/header` in the log kept them; read from a log without a
 * header, the system text and tools are unknown, and taken to be the next request's.
 */
interface Report {
  input: number
  messages: number
  system?: string
  schemas?: readonly ToolSchema[] | string
}

/**
 * The report a session's log ends with: the input its last answer with usage reported, the
 * messages that request carried, and the system text and tools the headers before it wrote.
 * Undefined when no answer reported usage, or a compaction after the last one rewrote the
 * messages it describes.
 */
export function loggedReport(session: Pick<Session, 'events' | 'messageEntries'>): Report | undefined {
  const { events } = session
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!
    if (event.type === 'context/compacted') return undefined
    if (event.type !== 'assistant/message') continue
    const { usage } = eventData(event, 'assistant/message')
    // An answer without usage leaves the one before, which still describes a prefix of the messages.
    if (!isReport(usage)) continue
    // No compaction follows it: the messages before the answer are the ones its request carried.
    const messages = session.messageEntries().filter((entry) => entry.seq < event.seq).length
    return { input: inputOf(usage), messages, ...sentWith(events, i) }
  }
  return undefined
}

/** The system text and tools (as JSON) of the request answered at `index`: each from the last header before it that wrote it. */
function sentWith(events: readonly SessionEvent[], index: number): Pick<Report, 'system' | 'schemas'> {
  let system: string | undefined
  let schemas: string | undefined
  for (let i = index - 1; i >= 0 && (system === undefined || schemas === undefined); i--) {
    const event = events[i]!
    if (event.type !== 'request/header') continue
    const header = eventData(event, 'request/header')
    system ??= header.system
    if (schemas === undefined && header.tools !== undefined) schemas = JSON.stringify(header.tools)
  }
  return { ...(system !== undefined ? { system } : {}), ...(schemas !== undefined ? { schemas } : {}) }
}

/** Tokens of a schema list as `requestTokens` counts them, once per list and tokenizer (the registry hands the same list while nothing changes). */
const schemaCounts = new WeakMap<readonly ToolSchema[], { tokens: Tokenizer; count: number }>()
function schemaTokens(tokens: Tokenizer, schemas: readonly ToolSchema[]): number {
  const known = schemaCounts.get(schemas)
  if (known?.tokens === tokens) return known.count
  const count = schemas.length > 0 ? tokens(JSON.stringify(schemas)) : 0
  schemaCounts.set(schemas, { tokens, count })
  return count
}

function sameSchemas(a: readonly ToolSchema[], b: readonly ToolSchema[]): boolean {
  return a === b || (a.length === b.length && a.every((schema, i) => schema === b[i]))
}

/** What the tools offered now add to (or take from) the count of those the report's request was sent with. */
function schemaChange(tokens: Tokenizer, reported: Report['schemas'], schemas: readonly ToolSchema[]): number {
  if (reported === undefined) return 0
  if (typeof reported !== 'string') return sameSchemas(reported, schemas) ? 0 : schemaTokens(tokens, schemas) - schemaTokens(tokens, reported)
  // The log's JSON, counted as `requestTokens` counts a list (an empty one adds nothing): the same tools count the same.
  return schemaTokens(tokens, schemas) - (reported === '[]' ? 0 : tokens(reported))
}

/**
 * One per agent: remembers the last report, forgets it when the messages were rewritten.
 *
 * The provider's figure is the best count there is of what it read: a request that differs from
 * the reported one in more than its appended messages (an unpinned section rendered anew, a tool
 * registered meanwhile, another route answering) is estimated as that figure plus the counted
 * difference, never counted afresh: a provider whose tokenizer reads far more than one token per 4
 * characters would otherwise see the figure collapse to a fraction of what it just reported.
 */
export class ContextMeter {
  /** `report`: where a resumed session's log left off (`loggedReport`). */
  constructor(private report?: Report) {}

  /**
   * The request just answered reported `usage` for these parts. A request answered without usage
   * (or with an input of nothing) leaves the earlier report, which still describes a prefix of the messages.
   */
  observe(usage: TokenUsage | undefined, system: string, schemas: readonly ToolSchema[], messages: number): void {
    if (isReport(usage)) this.report = { input: inputOf(usage), messages, system, schemas }
  }

  /** The messages were rewritten (a compaction): the report no longer describes a prefix of them. */
  forget(): void {
    this.report = undefined
  }

  /** The next request's input tokens. */
  estimate(tokens: Tokenizer, system: string, schemas: readonly ToolSchema[], messages: readonly Message[]): number {
    const report = this.report
    // Fewer messages than were reported (rewritten, not by a compaction): nothing to start from.
    if (!report || report.messages > messages.length) return requestTokens(tokens, system, schemas, messages)
    const systemDelta = report.system === undefined || report.system === system ? 0 : tokens(system) - tokens(report.system)
    const schemaDelta = schemaChange(tokens, report.schemas, schemas)
    // A shrunk system text or tool list lowers the figure by its own count; it cannot take away more than the report.
    return Math.max(0, report.input + systemDelta + schemaDelta) + messageTokens(tokens, messages.slice(report.messages))
  }
}
