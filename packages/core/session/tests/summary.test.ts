import { describe, expect, it } from 'vitest'
import { SESSION_FORMAT_VERSION, SessionSummarizer, summarize, TITLE_SCAN_CHARS, type SessionEvent, type SessionHeader } from '../src/index.ts'

const header: SessionHeader = { formatVersion: SESSION_FORMAT_VERSION, id: 's', createdAt: '2026-01-01T00:00:00.000Z', cwd: '/w', depth: 0 }
const at = (seq: number) => `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`
const user = (seq: number, ...texts: string[]): SessionEvent => ({
  seq, type: 'user/message', time: at(seq),
  data: { message: { id: `m${seq}`, role: 'user', content: texts.map((text) => ({ type: 'text', text })), source: { kind: 'user' } } },
})

describe('summarize', () => {
  it('makes a title of a huge message\'s start, marked as going on, without reading all of it', () => {
    const huge = `${'word '.repeat(3)}${'x'.repeat(50 * 1024 * 1024)}`
    expect(summarize(header, [user(0, huge)]).title).toBe(`word word word ${'x'.repeat(TITLE_SCAN_CHARS - 'word word word '.length)}…`)
    // Words from a later block, after a short first one, as before.
    expect(summarize(header, [user(0, 'fix', '', 'the parser')]).title).toBe('fix the parser')
    expect(summarize(header, [user(0, 'one two three four five six seven eight nine ten eleven twelve thirteen')]).title).toBe('one two three four five six seven eight nine ten eleven twelve…')
  })

  it('is what a SessionSummarizer makes of the same events one at a time, at any point', () => {
    const events: SessionEvent[] = [
      { seq: 0, type: 'turn/start', time: at(0), data: { turn: 1 } },
      user(1, 'hello there'),
      { seq: 2, type: 'llm/attempt', time: at(2), data: { usage: { inputTokens: 3, outputTokens: 4 }, cost: 0.5 } },
      { seq: 3, type: 'assistant/message', time: at(3), data: { message: { id: 'a', role: 'assistant', content: [], source: { kind: 'model' } }, usage: { inputTokens: 9, outputTokens: 9 }, provider: 'p', model: 'm' } },
      { seq: 4, type: 'turn/end', time: at(4), data: { turn: 1, reason: 'completed' } },
      { seq: 5, type: 'turn/start', time: at(5), data: { turn: 2 } },
      { seq: 6, type: 'assistant/message', time: at(6), data: { message: { id: 'b', role: 'assistant', content: [], source: { kind: 'model' } }, usage: { inputTokens: 1, outputTokens: 2 }, provider: 'p', model: 'n', cost: 0.25 } },
    ]
    const summarizer = new SessionSummarizer(header)
    for (let count = 1; count <= events.length; count++) {
      summarizer.add(events[count - 1]!)
      // The open turn is counted in each summary, and counting it does not count it twice later.
      expect(summarizer.summary()).toEqual(summarize(header, events.slice(0, count)))
    }
    expect(summarizer.summary()).toMatchObject({ usage: { inputTokens: 4, outputTokens: 6 }, cost: 0.75, turns: 2, status: 'needs-repair', model: 'n' })
  })
})
