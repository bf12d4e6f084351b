/**
 * `deriveMessages`: the log projected into exactly the messages the next request carries.
 * Pure: the same events give the same messages, byte for byte.
 */

import { cutHead, cutTail, freezeJson, leftOutText } from '@rein/base'
import { createMessage, toolResultMessage, type ImageBlock, type Message, type TextBlock, type ToolResultBlock } from '@rein/llm'
import { eventData } from './event-data.ts'
import type { ContextCompacted, CoreEventData, SessionEvent } from './events.ts'

type ToolResultData = CoreEventData['tool/result']

/**
 * The projection built one event at a time, so a growing log is not derived again from the start
 * on every request. `deriveMessages(events)` is this fed all at once. Each message keeps the seq
 * of the event that made it, so a compaction can name the range it replaces.
 */
export class MessageProjection {
  private done: { seq: number; message: Message }[] = []
  private results: { seq: number; data: ToolResultData }[] = []
  /**
   * The trailing results as one message, once made: the same object when they are closed into the
   * history, so the next request repeats the last one's objects (a provider reuses their JSON).
   */
  private group: Message | undefined
  /** Whether a compaction changed what the model sees. */
  compacted = false
  /** Turns the log has started (`turn/start` events). */
  turns = 0
  /** `messages()` until the next event: a step asks for them more than once. */
  private cached: readonly Message[] | undefined

  push(event: SessionEvent): void {
    this.cached = undefined
    if (event.type === 'turn/start') {
      this.turns++
    } else if (event.type === 'tool/result') {
      this.results.push({ seq: event.seq, data: eventData(event, 'tool/result') })
      this.group = undefined
    } else if (event.type === 'user/message') {
      this.closeResults()
      this.done.push({ seq: event.seq, message: logMessage(eventData(event, 'user/message').message) })
    } else if (event.type === 'assistant/message') {
      this.closeResults()
      const { message } = eventData(event, 'assistant/message')
      if (message.content.length > 0) this.done.push({ seq: event.seq, message: logMessage(message) })
    } else if (event.type === 'context/compacted') {
      this.closeResults()
      this.done = applyCompaction(this.done, eventData(event, 'context/compacted'), event.seq)
      this.compacted = true
    }
  }

  /** The messages so far; trailing tool results are grouped as they will be once the log moves on. */
  messages(): readonly Message[] {
    if (this.cached) return this.cached
    // A loop, not `map`: V8's inlined `map` here deoptimized the agent's step that called it.
    const messages: Message[] = []
    for (const entry of this.done) messages.push(entry.message)
    if (this.results.length > 0) messages.push(this.groupMessage())
    return this.cached = messages
  }

  /** The messages with the seq of the event that made each (a result group: its first result's). */
  entries(): { seq: number; message: Message }[] {
    return this.results.length > 0 ? [...this.done, { seq: this.results[0]!.seq, message: this.groupMessage() }] : [...this.done]
  }

  private closeResults() {
    if (this.results.length === 0) return
    this.done.push({ seq: this.results[0]!.seq, message: this.groupMessage() })
    this.results = []
    this.group = undefined
  }

  private groupMessage(): Message {
    return this.group ??= groupResults(this.results)
  }
}

/**
 * The messages (with their seqs) as a compaction written at `seq` leaves them: pruned results and
 * arguments stubbed, the summarized range one message.
 */
export function applyCompaction(done: readonly { seq: number; message: Message }[], data: ContextCompacted, seq: number): { seq: number; message: Message }[] {
  const pruned = new Map(data.pruned.map((entry) => [entry.callId, entry]))
  const calls = new Set(data.prunedArguments?.map((entry) => entry.callId))
  let entries = pruned.size === 0 && calls.size === 0 ? [...done] : done.map((entry) => ({ seq: entry.seq, message: withArgumentsStubbed(withStubs(entry.message, pruned), calls) }))
  const { summary } = data
  if (summary) {
    const first = entries.findIndex((entry) => entry.seq >= summary.fromSeq)
    const after = entries.findIndex((entry) => entry.seq > summary.toSeq)
    const end = after === -1 ? entries.length : after
    if (first !== -1 && first < end) {
      const kept = summary.keptSeq === undefined ? undefined : entries.slice(first, end).find((entry) => entry.seq === summary.keptSeq)
      const opening = { seq: summary.fromSeq, message: summaryMessage(summary.text, seq, kept !== undefined) }
      entries = [...entries.slice(0, first), opening, ...(kept ? [kept] : []), ...entries.slice(end)]
    }
  }
  return entries
}

/** A tool-result message with the pruned results' content replaced by their stubs. */
function withStubs(message: Message, pruned: ReadonlyMap<string, { callId: string; name: string; chars: number }>): Message {
  if (message.source.kind !== 'tool' || !message.content.some((block) => block.type === 'tool-result' && pruned.has(block.toolCallId))) return message
  return toolResultMessage(message.content.flatMap((block) => {
    if (block.type !== 'tool-result') return []
    const entry = pruned.get(block.toolCallId)
    const content = entry ? [{ type: 'text' as const, text: prunedStub(entry) }] : block.content
    return [{ toolCallId: block.toolCallId, content, ...(block.isError ? { isError: true } : {}) }]
  }), message.id)
}

/** Whether a compaction changes what the model sees: something pruned or summarized. */
export function changesHistory(data: ContextCompacted): boolean {
  return data.pruned.length > 0 || (data.prunedArguments?.length ?? 0) > 0 || data.summary !== undefined
}

/** An answer with the pruned calls' arguments replaced by their stubs. */
function withArgumentsStubbed(message: Message, calls: ReadonlySet<string>): Message {
  if (message.role !== 'assistant' || !message.content.some((block) => block.type === 'tool-call' && calls.has(block.id))) return message
  const content = message.content.map((block) => (block.type === 'tool-call' && calls.has(block.id) ? { ...block, arguments: argumentsStub(block.arguments) } : block))
  return createMessage('assistant', content, message.source, message.id)
}

/** A field of a call's arguments longer than this is left out of a pruned call; a path or a command usually is shorter. */
const KEPT_FIELD_CHARS = 200
/** A pruned call's arguments longer than this (many short fields, long keys) are left out whole. */
const MOST_STUB_CHARS = 2_000

/**
 * What the model reads in place of a pruned call's arguments: a JSON object still (servers that
 * parse arguments expect one), its short fields as they were and each longer one its size
 * (`leftOutText`). Arguments that are not a JSON object, or whose short fields alone are long,
 * become one field saying how long they were; arguments with nothing long stay as they were.
 */
export function argumentsStub(raw: string): string {
  const fields = objectOf(raw)
  const whole = JSON.stringify({ arguments: leftOutText(raw.length) })
  if (!fields) return whole
  let cut = false
  const kept = Object.entries(fields).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value) ?? ''
    if (text.length <= KEPT_FIELD_CHARS) return [key, value]
    cut = true
    return [key, leftOutText(text.length)]
  })
  const stub = JSON.stringify(Object.fromEntries(kept))
  if (stub.length > MOST_STUB_CHARS) return whole
  return cut ? stub : raw
}

function objectOf(raw: string): object | undefined {
  try {
    const value: unknown = JSON.parse(raw)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** What the model reads in place of a pruned tool result. */
export function prunedStub(entry: { callId: string; name: string; chars: number }): string {
  return `[${entry.name} result pruned to save context (${entry.chars} characters, kept whole in the session log); recall_result {"call_id": "${entry.callId}"} shows it again]`
}

/**
 * The message a summary becomes, where the range it replaces began. `keptAfter`: a message of the
 * range follows it word for word, and the opening says so.
 */
export function summaryMessage(text: string, seq: number, keptAfter = false): Message {
  const opening = keptAfter ? `${SUMMARY_OPENING} ${KEPT_NOTE}` : SUMMARY_OPENING
  return createMessage('user', [{ type: 'text', text: `${opening}\n\n${text}` }], { kind: 'plugin', plugin: 'compaction' }, `compaction-${seq}`)
}

/**
 * How a summary message opens: it tells the model what it is reading. Nothing about the log: the
 * model cannot read it, and what it keeps of a spilled result is the preview the model was shown.
 */
export const SUMMARY_OPENING = '[A summary of the conversation before this point, written when the context was compacted; the messages it stands for are no longer shown.]'

/**
 * Added to the opening when the request being worked on follows the summary: read after work the
 * summary already covers, it must not look like a new request to do that work again.
 */
export const KEPT_NOTE = '[The message after this summary is repeated from the conversation it covers, word for word: the request the last work summarized here was for.]'

/** The messages the next request carries, rebuilt from a log's events (compactions applied). */
export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  const projection = new MessageProjection()
  for (const event of events) projection.push(event)
  return [...projection.messages()]
}

/** Consecutive tool results: one user-role message, named after the first result's event. */
function groupResults(results: readonly { seq: number; data: ToolResultData }[]): Message {
  const content: ToolResultBlock[] = results.map(({ data }) => ({
    type: 'tool-result',
    toolCallId: data.callId,
    content: capContent(data.content, data.modelChars),
    ...(data.isError ? { isError: true } : {}),
  }))
  return logMessage({ id: `tool-results-${results[0]!.seq}`, role: 'user', content, source: { kind: 'tool' } })
}

/**
 * A message made of a log's data as frozen JSON (see `toFrozenJson`): frozen where it is, not
 * copied. One appended in this process is frozen already; one read back from a store is plain
 * parsed JSON that nothing changes. Frozen, a provider can keep each message's wire JSON and
 * reuse it on every later request of the session.
 */
function logMessage(message: Omit<Message, 'id'> & { id: string }): Message {
  return freezeJson(message) as unknown as Message
}

/**
 * Keeps the head and the tail of an over-long result and says what was cut in between. Text parts
 * are measured together; images are kept.
 */
export function capContent(content: readonly (TextBlock | ImageBlock)[], maxChars: number | undefined): (TextBlock | ImageBlock)[] {
  if (maxChars === undefined) return [...content]
  const text = content.filter((part): part is TextBlock => part.type === 'text').map((part) => part.text).join('\n')
  if (text.length <= maxChars) return [...content]
  const head = cutHead(text, Math.ceil(maxChars * 0.6))
  const tail = cutTail(text, maxChars - Math.ceil(maxChars * 0.6))
  const cut = text.length - head.length - tail.length
  const capped = `${head}\n\n[… ${cut} of ${text.length} characters cut here to fit the context; ask for a narrower range if you need them …]\n\n${tail}`
  return [{ type: 'text', text: capped }, ...content.filter((part): part is ImageBlock => part.type === 'image')]
}
