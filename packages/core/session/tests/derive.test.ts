import { assistantMessage, userMessage } from '@rein/llm'
import { isFrozenJson } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { argumentsStub, capContent, deriveMessages, MessageProjection, summaryMessage, SUMMARY_OPENING, type SessionEvent } from '../src/index.ts'

/** Half of a surrogate pair, alone: text no provider should be sent. */
const LONE_SURROGATE = /\p{Cs}/u

let seq = 0
const event = (type: string, data: unknown): SessionEvent => ({ seq: seq++, type, time: '2026-01-01T00:00:00.000Z', data: data as never })
const source = { kind: 'model', provider: 'p', model: 'm' } as const

describe('deriveMessages', () => {
  it('projects user, assistant and grouped tool results, skipping bookkeeping events', () => {
    seq = 0
    const user = userMessage('read both', 'u1')
    const assistant = assistantMessage([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }, { type: 'tool-call', id: 'c2', name: 'read', arguments: '{}' }], source, 'a1')
    const events = [
      event('turn/start', { turn: 1 }),
      event('step/start', { turn: 1, step: 1 }),
      event('user/message', { message: user }),
      event('request/header', { provider: 'p', model: 'm', systemHash: 'x', toolsHash: 'y' }),
      event('assistant/message', { message: assistant, provider: 'p', model: 'm' }),
      event('tool/call', { callId: 'c1', name: 'read', arguments: '{}', replaySafe: true }),
      event('tool/call', { callId: 'c2', name: 'read', arguments: '{}', replaySafe: true }),
      event('tool/result', { callId: 'c1', content: [{ type: 'text', text: 'one' }], isError: false }),
      event('tool/result', { callId: 'c2', content: [{ type: 'text', text: 'Error: gone' }], isError: true, code: 'TOOL_FAILED' }),
      event('step/end', { turn: 1, step: 1 }),
      event('assistant/message', { message: assistantMessage([], source, 'empty'), provider: 'p', model: 'm' }),
    ]
    expect(deriveMessages(events)).toEqual([
      user,
      assistant,
      {
        id: 'tool-results-7', role: 'user', source: { kind: 'tool' },
        content: [
          { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'one' }] },
          { type: 'tool-result', toolCallId: 'c2', content: [{ type: 'text', text: 'Error: gone' }], isError: true },
        ],
      },
    ])
    expect(JSON.stringify(deriveMessages(events))).toBe(JSON.stringify(deriveMessages(JSON.parse(JSON.stringify(events)) as SessionEvent[])))
    // Built one event at a time, the projection matches a fresh derivation at every point of the log.
    const projection = new MessageProjection()
    events.forEach((item, i) => {
      projection.push(item)
      expect(JSON.stringify(projection.messages())).toBe(JSON.stringify(deriveMessages(events.slice(0, i + 1))))
    })
  })

  it('keeps every message of the last request the same object in the next, the tool results it grouped included', () => {
    seq = 0
    const projection = new MessageProjection()
    const feed = [
      event('user/message', { message: userMessage('read it', 'u1') }),
      event('assistant/message', { message: assistantMessage([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source, 'a1'), provider: 'p', model: 'm' }),
      event('tool/result', { callId: 'c1', content: [{ type: 'text', text: 'one' }], isError: false }),
    ]
    for (const item of feed) projection.push(item)
    // The request after the tool ran: its results are grouped into one message.
    const sent = projection.messages()
    projection.push(event('assistant/message', { message: assistantMessage([{ type: 'text', text: 'done' }], source, 'a2'), provider: 'p', model: 'm' }))
    projection.push(event('user/message', { message: userMessage('thanks', 'u2') }))
    // A provider reuses the JSON it made for an object it saw before; a new object costs a new conversion of the whole prefix.
    const next = projection.messages()
    sent.forEach((message, i) => expect(next[i]).toBe(message))
  })

  it('gives frozen JSON messages for a log read back from text, so a provider can reuse their JSON on every later request', () => {
    seq = 0
    const assistant = assistantMessage([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source, 'a1')
    const written = [
      event('user/message', { message: userMessage('read it', 'u1') }),
      event('assistant/message', { message: assistant, provider: 'p', model: 'm' }),
      event('tool/result', { callId: 'c1', content: [{ type: 'text', text: 'one' }], isError: false }),
      event('user/message', { message: userMessage('thanks', 'u2') }),
    ]
    // What a store hands back: plain objects parsed from the log's lines, never frozen.
    const loaded = JSON.parse(JSON.stringify(written)) as SessionEvent[]
    const messages = deriveMessages(loaded)
    expect(messages).toEqual(deriveMessages(written))
    for (const message of messages) {
      expect(isFrozenJson(message)).toBe(true)
      expect(Object.isFrozen(message.content[0])).toBe(true)
    }
    // Read from the log, not copied: the projection holds the event's own message.
    expect(messages[0]).toBe((loaded[0]!.data as { message: unknown }).message)
  })

  it('caps a long result for the model with the cap recorded on its event', () => {
    seq = 0
    const text = 'a'.repeat(600) + 'b'.repeat(400)
    const [message] = deriveMessages([event('tool/result', { callId: 'c', content: [{ type: 'text', text }], isError: false, modelChars: 100 })])
    const block = message!.content[0]
    expect(block?.type === 'tool-result' && block.content).toEqual([{
      type: 'text', text: `${'a'.repeat(60)}\n\n[… 900 of 1000 characters cut here to fit the context; ask for a narrower range if you need them …]\n\n${'b'.repeat(40)}`,
    }])
  })
})

describe('summaryMessage', () => {
  it('does not open by telling the model the full history is kept in the session log: it cannot read the log, which holds a spilled result only as its preview', () => {
    const text = summaryMessage('## Goal\nShip it.', 7).content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    expect(text).not.toContain('full history')
    expect(text).not.toContain('session log')
    expect(text.startsWith(`${SUMMARY_OPENING}\n\n## Goal`)).toBe(true)
    expect(SUMMARY_OPENING).toBe('[A summary of the conversation before this point, written when the context was compacted; the messages it stands for are no longer shown.]')
  })
})

describe('capContent', () => {
  it('never splits a surrogate pair where it cuts (a result of emoji stays well-formed text)', () => {
    const text = `x${'😀'.repeat(500)}`
    for (const max of [99, 100, 101]) {
      const [capped] = capContent([{ type: 'text', text }], max)
      expect(capped?.type === 'text' && capped.text.match(LONE_SURROGATE) === null).toBe(true)
    }
  })

  it('leaves short content and images alone', () => {
    const content = [{ type: 'text' as const, text: 'short' }, { type: 'image' as const, mediaType: 'image/png', url: 'x' }]
    expect(capContent(content, 10)).toEqual(content)
    expect(capContent(content, undefined)).toEqual(content)
  })
})

describe('spending (issue #8)', () => {
  const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens })
  const at = (seq: number, type: string, data: unknown) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: data as never })
  const answer = { message: { id: 'a', role: 'assistant', content: [], source: { kind: 'model', provider: 'p', model: 'm' } }, provider: 'p', model: 'm' }

  it('counts a turn from its attempts, and an older turn without attempts from its answers', async () => {
    const { spending } = await import('../src/index.ts')
    const events = [
      at(0, 'turn/start', { turn: 1 }),
      at(1, 'assistant/message', { ...answer, usage: usage(10, 1), cost: 1 }),
      at(2, 'turn/end', { turn: 1, reason: 'completed' }),
      at(3, 'turn/start', { turn: 2 }),
      at(4, 'llm/attempt', { usage: usage(5, 0), cost: 0.5 }),
      at(5, 'llm/attempt', { usage: usage(20, 2), cost: 2 }),
      at(6, 'assistant/message', { ...answer, usage: usage(20, 2), cost: 2 }),
      at(7, 'turn/end', { turn: 2, reason: 'completed' }),
    ]
    expect(spending(events)).toEqual({ usage: usage(35, 3), cost: 3.5 })
  })

  it('counts an older turn from its answers when a compaction between turns recorded attempts after it', async () => {
    const { spending } = await import('../src/index.ts')
    const events = [
      at(0, 'turn/start', { turn: 1 }),
      at(1, 'assistant/message', { ...answer, usage: usage(200, 20), cost: 2 }),
      at(2, 'turn/end', { turn: 1, reason: 'completed' }),
      // `rein compact` by this rein: its summary request is an attempt of its own, after the turn.
      at(3, 'llm/attempt', { usage: usage(1000, 50), cost: 1 }),
    ]
    expect(spending(events)).toEqual({ usage: usage(1200, 70), cost: 3 })
  })

  it('counts a fork from where it forked: the copied turns were spent by the original', async () => {
    const { spending } = await import('../src/index.ts')
    const copied = [
      at(0, 'turn/start', { turn: 1 }),
      at(1, 'llm/attempt', { usage: usage(10, 1), cost: 1 }),
      at(2, 'turn/end', { turn: 1, reason: 'completed' }),
      at(3, 'session/forked', { fromSessionId: 'original', beforeSeq: 9 }),
    ]
    expect(spending(copied)).toEqual({ usage: usage(0, 0) })
    const resumed = [...copied, at(4, 'turn/start', { turn: 2 }), at(5, 'llm/attempt', { usage: usage(7, 2), cost: 0.25 }), at(6, 'turn/end', { turn: 2, reason: 'completed' })]
    expect(spending(resumed)).toEqual({ usage: usage(7, 2), cost: 0.25 })
  })

  it('counts a summary request a kill cut off once, from the attempt repair recorded, not from its mark', async () => {
    const { spending } = await import('../src/index.ts')
    const events = [
      at(0, 'turn/start', { turn: 1 }),
      at(1, 'llm/attempt', { usage: usage(10, 1), cost: 1 }),
      at(2, 'turn/end', { turn: 1, reason: 'completed' }),
      at(3, 'summary/start', { request: { provider: 'p', model: 'm', maxTokens: 256 }, inputTokens: 900 }),
    ]
    expect(spending(events)).toEqual({ usage: usage(10, 1), cost: 1 })
    const repaired = [...events, at(4, 'llm/attempt', { failure: { code: 'ABORTED', message: 'killed' }, usage: usage(900, 0), usageEstimated: true, cost: 0.5 })]
    expect(spending(repaired)).toEqual({ usage: usage(910, 1), cost: 1.5, usageEstimated: true })
  })

  it('says when part of what it counted was estimated (the provider reported no usage)', async () => {
    const { spending } = await import('../src/index.ts')
    const events = [
      at(0, 'turn/start', { turn: 1 }),
      at(1, 'llm/attempt', { usage: { inputTokens: 40, outputTokens: 3 }, usageEstimated: true }),
      at(2, 'turn/end', { turn: 1, reason: 'aborted' }),
    ]
    expect(spending(events)).toEqual({ usage: { inputTokens: 40, outputTokens: 3 }, usageEstimated: true })
    expect(spending(events.slice(0, 1))).toEqual({ usage: { inputTokens: 0, outputTokens: 0 } })
  })
})

describe('argumentsStub: what the model reads in place of a pruned call\'s arguments', () => {
  it('keeps the short fields as they were and says the size of each long one', () => {
    expect(argumentsStub(JSON.stringify({ path: 'a.txt', content: 'x'.repeat(500), lines: [1, 2] }))).toBe('{"path":"a.txt","content":"[500 characters left out to save context]","lines":[1,2]}')
  })

  it('leaves arguments with nothing long as the model sent them, byte for byte (nothing to save)', () => {
    const raw = '{"path": "caf\\u00e9.txt"}'
    expect(argumentsStub(raw)).toBe(raw)
  })

  it.each([
    ['not JSON', `{"text": "${'z'.repeat(300)}`],
    ['not an object', JSON.stringify(['z'.repeat(300)])],
    ['many short fields', JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`k${index}`, 'short'])))],
    ['a long key', JSON.stringify({ ['k'.repeat(5_000)]: 1 })],
  ])('leaves out arguments that are %s whole, in one field saying how long they were', (_what, raw) => {
    expect(argumentsStub(raw)).toBe(`{"arguments":"[${raw.length} characters left out to save context]"}`)
  })

  it('gives the same stub for a stub: a call pruned twice changes nothing', () => {
    const once = argumentsStub(JSON.stringify({ path: 'a.txt', content: 'x'.repeat(500) }))
    expect(argumentsStub(once)).toBe(once)
  })
})
