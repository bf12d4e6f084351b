/**
 * `deriveMessages`: the log projected into exactly the messages the next request carries.
 * Pure: the same events give the same messages, byte for byte.
 */

import { toolResultMessage, type ImageBlock, type Message, type TextBlock } from '@rein/llm'
import { eventData } from './event-data.ts'
import type { CoreEventData, SessionEvent } from './events.ts'

type ToolResultData = CoreEventData['tool/result']

/**
 * The projection built one event at a time, so a growing log is not derived again from the start
 * on every request. `deriveMessages(events)` is this fed all at once.
 */
export class MessageProjection {
  private readonly done: Message[] = []
  private results: { seq: number; data: ToolResultData }[] = []

  push(event: SessionEvent): void {
    if (event.type === 'tool/result') {
      this.results.push({ seq: event.seq, data: eventData(event, 'tool/result') })
    } else if (event.type === 'user/message') {
      this.closeResults()
      this.done.push(eventData(event, 'user/message').message)
    } else if (event.type === 'assistant/message') {
      this.closeResults()
      const { message } = eventData(event, 'assistant/message')
      if (message.content.length > 0) this.done.push(message)
    }
  }

  /** The messages so far; trailing tool results are grouped as they will be once the log moves on. */
  messages(): Message[] {
    return this.results.length > 0 ? [...this.done, groupResults(this.results)] : [...this.done]
  }

  private closeResults() {
    if (this.results.length === 0) return
    this.done.push(groupResults(this.results))
    this.results = []
  }
}

export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  const projection = new MessageProjection()
  for (const event of events) projection.push(event)
  return projection.messages()
}

/** Consecutive tool results: one user-role message, named after the first result's event. */
function groupResults(results: readonly { seq: number; data: ToolResultData }[]): Message {
  return toolResultMessage(results.map(({ data }) => ({
    toolCallId: data.callId,
    content: capContent(data.content, data.modelChars),
    ...(data.isError ? { isError: true } : {}),
  })), `tool-results-${results[0]!.seq}`)
}

/**
 * Keeps the head and the tail of an over-long result and says what was cut in between. Text parts
 * are measured together; images are kept.
 */
export function capContent(content: readonly (TextBlock | ImageBlock)[], maxChars: number | undefined): (TextBlock | ImageBlock)[] {
  const text = content.filter((part): part is TextBlock => part.type === 'text').map((part) => part.text).join('\n')
  if (maxChars === undefined || text.length <= maxChars) return [...content]
  const head = Math.ceil(maxChars * 0.6)
  const tail = maxChars - head
  const cut = text.length - head - tail
  const capped = `${text.slice(0, head)}\n\n[… ${cut} of ${text.length} characters cut here to fit the context; ask for a narrower range if you need them …]\n\n${tail > 0 ? text.slice(-tail) : ''}`
  return [{ type: 'text', text: capped }, ...content.filter((part): part is ImageBlock => part.type === 'image')]
}
