// Found by the soak fuzzer (suite 3, soak/corpus/session-log): a log line that is valid JSON with a
// valid envelope but a core event of the wrong shape (a flipped byte in a key: "message" → "messagf")
// loaded, and then crashed its readers — resume, the message projection, the repair plan — with a
// TypeError instead of being refused as SESSION_CORRUPT.
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { userMessage } from '@rein/llm'
import { describe, expect, it } from 'vitest'
import SessionService, { type LoadedSession, type SessionEvent, type SessionStore } from '../src/index.ts'

const header = { formatVersion: 1, id: 's1', createdAt: '2026-01-01T00:00:00.000Z', cwd: '/w', depth: 0 }
const time = '2026-01-01T00:00:00.000Z'
const source = { kind: 'model', provider: 'p', model: 'm' }
const good: [string, unknown][] = [
  ['turn/start', { turn: 1 }],
  ['user/message', { message: userMessage('hi', 'u1') }],
  ['step/start', { turn: 1, step: 1 }],
  ['assistant/message', { message: { id: 'a1', role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source }, provider: 'p', model: 'm', usage: { inputTokens: 1, outputTokens: 1 } }],
  ['tool/call', { callId: 'c1', name: 'read', arguments: '{}', replaySafe: true }],
  ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'ok' }], isError: false }],
  ['step/end', { turn: 1, step: 1 }],
  ['turn/end', { turn: 1, reason: 'completed' }],
  // A compaction between turns: its summary request about to be sent.
  ['summary/start', { request: { provider: 'p', model: 'm', maxTokens: 256 }, inputTokens: 900 }],
  // Its retry about to be sent.
  ['llm/resend', { request: { provider: 'p', model: 'm', maxTokens: 256 }, retry: 1, fallback: 0 }],
]

/** A store that hands out `events` as stored, whatever their shape. */
function storeOf(events: [string, unknown][]): SessionStore & { closed: string[] } {
  const loaded = (): LoadedSession => ({ header, events: events.map(([type, data], seq) => ({ seq, type, time, data }) as SessionEvent) })
  const closed: string[] = []
  return {
    closed,
    create: async () => {}, append: async () => {}, flush: async () => {}, list: async () => [],
    open: async () => loaded(), load: async () => loaded(),
    close: async (id) => { closed.push(id) },
  }
}

async function boot(store: SessionStore) {
  const root = new Context()
  await root.plugin(SessionService)
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
  return root
}

const code = (error: unknown) => (isReinError(error) ? error.code : error)

describe('a log with a core event of the wrong shape', () => {
  it('loads when every event has its shape (the control)', async () => {
    const root = await boot(storeOf(good))
    expect((await root.sessions.load('s1')).events).toHaveLength(good.length)
    expect((await root.sessions.open('s1')).messages()).toHaveLength(3)
  })

  const broken: [string, number, unknown][] = [
    ['an assistant message without its message', 3, { messagf: {}, provider: 'p', model: 'm' }],
    ['a message whose content is not a list', 1, { message: { id: 'u1', role: 'user', content: 'hi', source: { kind: 'user' } } }],
    ['a tool call block without an id', 3, { message: { id: 'a1', role: 'assistant', content: [{ type: 'tool-call', name: 'read', arguments: '{}' }], source }, provider: 'p', model: 'm' }],
    ['a result whose content is not a list', 5, { callId: 'c1', content: null, isError: false }],
    ['an intent whose call id is a number', 4, { callId: 1, name: 'read', arguments: '{}', replaySafe: true }],
    ['a turn numbered by a string', 0, { turn: '1' }],
    ['a summary mark without the request a repair would charge', 8, { inputTokens: 900 }],
    ['a resend mark whose route has no model', 9, { request: { provider: 'p' }, retry: 1, fallback: 0 }],
    ['usage that is not a number', 3, { message: { id: 'a1', role: 'assistant', content: [], source }, provider: 'p', model: 'm', usage: { inputTokens: '1', outputTokens: 1 } }],
    // Sent as written, the model would read its own answer as the person's.
    ['an answer whose role is not assistant', 3, { message: { id: 'a1', role: 'wizard', content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }], source }, provider: 'p', model: 'm' }],
    ['a user message whose role is assistant', 1, { message: { ...userMessage('hi', 'u1'), role: 'assistant' } }],
  ]
  it.each(broken)('is refused as SESSION_CORRUPT on load and on open: %s', async (_what, at, data) => {
    const events = good.map(([type, value], i): [string, unknown] => [type, i === at ? data : value])
    const store = storeOf(events)
    const root = await boot(store)
    expect(code(await root.sessions.load('s1').catch((error: unknown) => error))).toBe('SESSION_CORRUPT')
    expect(code(await root.sessions.open('s1').catch((error: unknown) => error))).toBe('SESSION_CORRUPT')
    expect(store.closed).toEqual(['s1'])
  })
})

describe('a log whose closed step does not pair its calls', () => {
  // A provider refuses every request built from such a log (a call with no result after it): the
  // session could never be continued, and nothing would say why.
  const unpaired: [string, [string, unknown][]][] = [
    ['a call without its result', good.filter(([type]) => type !== 'tool/result')],
    ['a call without its intent or result', good.filter(([type]) => type !== 'tool/result' && type !== 'tool/call')],
    ['a result answering a call nobody asked for', good.map(([type, value]): [string, unknown] => [type, type === 'tool/result' ? { ...(value as object), callId: 'zzz' } : value])],
    ['a call answered twice', good.flatMap((entry): [string, unknown][] => (entry[0] === 'tool/result' ? [entry, entry] : [entry]))],
  ]
  it.each(unpaired)('is refused as SESSION_CORRUPT on open, naming the step, and still read by load (an older rein wrote some): %s', async (_what, events) => {
    const store = storeOf(events)
    const root = await boot(store)
    expect((await root.sessions.load('s1')).events).toHaveLength(events.length)
    const error = await root.sessions.open('s1').catch((caught: unknown) => caught)
    expect(code(error)).toBe('SESSION_CORRUPT')
    expect((error as Error).message).toMatch(/^session s1 has event #\d+ \(step\/end\) closing step 1 of turn 1, in which tool call (c1|zzz) \(.*\) has [02] results? .*rein leaves the log as it is — repair it or move it out of the sessions folder$/)
    expect(store.closed).toEqual(['s1'])
  })

  it('still opens a log cut off inside a step, which repair pairs', async () => {
    const root = await boot(storeOf(good.slice(0, 5)))
    expect((await root.sessions.open('s1')).events).toHaveLength(5)
  })
})
