/**
 * `deriveMessages`: the log projected into exactly the messages the next request carries.
 * Pure: the same events give the same messages, byte for byte.
 */

import { toolResultMessage, type ImageBlock, type Message, type TextBlock } from '@rein/llm'
import type { CoreEventData, SessionEvent } from './events.ts'

type ToolResultData = CoreEventData['tool/result']

export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  const messages: Message[] = []
  let results: { seq: number; data: ToolResultData }[] = []
  const flushResults = () => {
    if (results.length === 0) return
    messages.push(toolResultMessage(results.map(({ data }) => ({
      toolCallId: data.callId,
      content: capContent(data.content, data.modelChars),
      ...(data.isError ? { isError: true } : {}),
    })), `tool-results-${results[0]!.seq}`))
    results = []
  }
  for (const event of events) {
    if (event.type === 'tool/result') {
      results.push({ seq: event.seq, data: event.data as unknown as ToolResultData })
      continue
    }
    if (event.type === 'user/message') {
      flushResults()
      messages.push((event.data as unknown as CoreEventData['user/message']).message)
    } else if (event.type === 'assistant/message') {
      flushResults()
      const { message } = event.data as unknown as CoreEventData['assistant/message']
      if (message.content.length > 0) messages.push(message)
    }
  }
  flushResults()
  return messages
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
