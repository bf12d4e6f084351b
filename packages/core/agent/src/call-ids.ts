/**
 * Tool-call ids unique within a session. Some servers omit ids or reuse them across answers, and
 * repair pairs calls to results by id; the agent gives any id already used in the session, or
 * empty, a fresh one before the answer is logged, so the log and every request agree on it.
 */

import { newToolCallId, type ContentBlock } from '@rein/llm'
import { eventData, type SessionEvent } from '@rein/session'

export class CallIds {
  private readonly seen = new Set<string>()

  constructor(events: readonly SessionEvent[]) {
    for (const event of events) {
      if (event.type !== 'assistant/message') continue
      for (const block of eventData(event, 'assistant/message').message.content) if (block.type === 'tool-call') this.seen.add(block.id)
    }
  }

  /** `blocks` with every tool-call id unique in the session; other blocks are returned as they are. */
  assign(blocks: readonly ContentBlock[]): ContentBlock[] {
    return blocks.map((block) => {
      if (block.type !== 'tool-call') return block
      const id = block.id !== '' && !this.seen.has(block.id) ? block.id : newToolCallId()
      this.seen.add(id)
      return id === block.id ? block : { ...block, id }
    })
  }
}
