// How `rein show` words each attempt of a summary request, from the log alone: one whose summary
// became the compaction "answered"; one whose summary `rein compact` refused (not shorter, too
// long, empty) left no `context/compacted`, and must not read as a compaction that happened.
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { attemptLine, planSpend } from '../src/commands/show-spend.ts'

const attempt = { provider: 'openai', model: 'm1', retry: 0, fallback: 0, startedAt: 1, endedAt: 2, shown: true, finishReason: 'stop', usage: { inputTokens: 1722, outputTokens: 25_000 } }

function log(types: [string, unknown][]): SessionEvent[] {
  return types.map(([type, data], seq) => ({ seq, type, time: '2026-12-04T00:00:00.000Z', data }) as SessionEvent)
}

function summaryLines(events: SessionEvent[]): string[] {
  const { attempts } = planSpend(events)
  return [...attempts.values()].map((shown) => attemptLine(shown.attempt, shown.summary, shown.unused))
}

describe('rein show: a summary request', () => {
  it('reads as answered but not used when no compaction followed it (the summary was refused)', () => {
    const events = log([
      ['turn/start', { turn: 1 }], ['turn/end', { turn: 1, reason: 'completed' }],
      ['summary/start', { request: { provider: 'openai', model: 'm1', maxTokens: 2048 }, inputTokens: 1722 }],
      ['llm/attempt', attempt],
    ])
    expect(summaryLines(events)).toEqual(['  · summary request answered, its summary not used (refused: nothing was compacted) · openai/m1 · tokens in 1,722 out 25,000'])
  })

  it('reads as answered when its summary became the compaction', () => {
    const events = log([
      ['summary/start', { request: { provider: 'openai', model: 'm1', maxTokens: 2048 }, inputTokens: 1722 }],
      ['llm/attempt', attempt],
      ['context/compacted', { summary: { text: 's', fromSeq: 0, toSeq: 0, provider: 'openai', model: 'm1' } }],
    ])
    expect(summaryLines(events)).toEqual(['  · summary request answered · openai/m1 · tokens in 1,722 out 25,000'])
  })
})
