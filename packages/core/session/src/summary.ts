/** What `list()` shows of a session, computed the same way by every store. */

import type { SessionEvent, SessionHeader } from './events.ts'
import type { SessionSummary } from './store.ts'

const TITLE_WORDS = 12

export function summarize(header: SessionHeader, events: readonly SessionEvent[]): SessionSummary {
  let title: string | undefined
  let turns = 0
  for (const event of events) {
    if (event.type === 'turn/start') turns++
    if (title === undefined && event.type === 'user/message') title = titleOf(event.data)
  }
  return {
    id: header.id,
    createdAt: header.createdAt,
    cwd: header.cwd,
    ...(title ? { title } : {}),
    turns,
    lastActivity: events.at(-1)?.time ?? header.createdAt,
    ...(header.parentSessionId ? { parentSessionId: header.parentSessionId } : {}),
  }
}

function titleOf(data: unknown): string | undefined {
  const content = (data as { message?: { content?: { type?: string; text?: string }[] } }).message?.content ?? []
  const text = content.filter((block) => block.type === 'text').map((block) => block.text ?? '').join(' ')
  const words = text.split(/\s+/).filter(Boolean)
  if (words.length === 0) return undefined
  return words.slice(0, TITLE_WORDS).join(' ') + (words.length > TITLE_WORDS ? '…' : '')
}
