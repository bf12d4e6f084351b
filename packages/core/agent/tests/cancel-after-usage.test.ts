// The audit's repro-abort-usage at the agent's seam: a turn cancelled (Ctrl-C) after the provider
// reported usage mid-stream must charge that usage once — the last report, not an estimate nor a sum
// — plus an estimate of the output that came after it (' more', 2 tokens at 4 characters a token).
import type { AdapterRequest, StreamChunk } from '@rein/llm'
import { eventData, MemorySessionStore, type SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { boot, expectValidLog } from './fixtures.ts'

/** Cumulative usage along the way (a server's continuous usage stats), then nothing until the abort. */
async function* reportingAlong(request: AdapterRequest): AsyncGenerator<StreamChunk> {
  yield { type: 'block-start', index: 0, blockType: 'text' }
  yield { type: 'text-delta', index: 0, text: 'partial' }
  yield { type: 'usage', usage: { inputTokens: 700, outputTokens: 10 } }
  yield { type: 'text-delta', index: 0, text: ' answer' }
  yield { type: 'usage', usage: { inputTokens: 700, outputTokens: 70 } }
  yield { type: 'text-delta', index: 0, text: ' more' }
  await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }))
}

describe('a turn cancelled after the provider reported usage', () => {
  it('charges the last usage reported, once, and estimates only the output after it', async () => {
    const { root } = await boot([], { agent: { provider: 'along' }, models: [{ id: 'm', pricing: { input: 1_000_000, output: 1_000_000 } }] })
    root.llm.registerAdapter('along', { stream: reportingAlong, resolveModel: () => ({ id: 'm', pricing: { input: 1_000_000, output: 1_000_000 } }) })
    const agent = await root.agents.create()
    agent.subscribe((event) => { if (event.type === 'text-delta' && event.text === ' more') agent.cancel('user pressed Ctrl-C') })
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'aborted', usage: { inputTokens: 700, outputTokens: 72 }, cost: 772, usageEstimated: true })
    const attempts = agent.session.events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
    expect(attempts).toEqual([expect.objectContaining({ finishReason: 'aborted', usage: { inputTokens: 700, outputTokens: 72 }, cost: 772, usageEstimated: true })])
    expectValidLog(agent.session.events)
  })
})

/** Sends the request, has the turn cancelled (Ctrl-C) while the server is silent, and waits for it. */
function sentThenSilent(cancel: () => void) {
  const silence = async (request: AdapterRequest): Promise<never> => {
    request.sent?.()
    cancel()
    await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }))
    throw request.signal.reason
  }
  return (request: AdapterRequest): AsyncIterable<StreamChunk> => ({ [Symbol.asyncIterator]: () => ({ next: () => silence(request) }) })
}

describe('a turn cancelled while the server is silent', () => {
  it('an attempt cancelled after its request reached the server is charged an estimate of its input', async () => {
    const pricing = { input: 1_000_000, output: 1_000_000 }
    const { root } = await boot([], { agent: { provider: 'silent' } })
    let cancel = () => {}
    root.llm.registerAdapter('silent', { stream: sentThenSilent(() => cancel()), resolveModel: () => ({ id: 'm', pricing }) })
    const agent = await root.agents.create()
    cancel = () => agent.cancel('user pressed Ctrl-C')
    const result = await agent.send('go')
    const attempts = agent.session.events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
    expect(attempts).toEqual([expect.objectContaining({ failure: expect.objectContaining({ code: 'ABORTED' }), usage: { inputTokens: expect.any(Number), outputTokens: 0 }, usageEstimated: true })])
    const { usage, cost } = attempts[0]!
    expect(usage!.inputTokens).toBeGreaterThan(0)
    expect(cost).toBe(usage!.inputTokens)
    expect(result).toMatchObject({ reason: 'aborted', usage, cost, usageEstimated: true })
    expectValidLog(agent.session.events)
  })
})

describe('a request cancelled live and the same request cut off by a kill', () => {
  it('are charged the same estimate of their input: the text the model reads, not the log\'s ids and fields', async () => {
    const sentWith = async (cancelLive: boolean) => {
      const store = new MemorySessionStore()
      const { root } = await boot([], { agent: { provider: 'silent', system: 'Answer briefly.' }, store })
      let cancel = () => {}
      root.llm.registerAdapter('silent', { stream: sentThenSilent(() => cancel()), resolveModel: () => ({ id: 'm' }) })
      const agent = await root.agents.create({ sessionId: 's' })
      // Killed: what the store held once the request was sent is all a resume finds.
      let left: MemorySessionStore | undefined
      cancel = cancelLive ? () => agent.cancel('user pressed Ctrl-C') : () => { void copied(store).then((copy) => { left = copy; agent.cancel('stopped') }) }
      await agent.send('look the keys up: alpha, beta, gamma')
      if (cancelLive) return attemptsOf(agent.session.events)[0]?.usage?.inputTokens
      const next = await boot([], { agent: { provider: 'silent', system: 'Answer briefly.' }, store: left! })
      next.root.llm.registerAdapter('silent', { stream: sentThenSilent(() => {}), resolveModel: () => ({ id: 'm' }) })
      const { agent: resumed } = await next.root.agents.resume('s')
      await resumed.close()
      return attemptsOf((await left!.load('s')).events).find((attempt) => attempt.usageEstimated)?.usage?.inputTokens
    }
    const live = await sentWith(true)
    const cut = await sentWith(false)
    expect(cut).toBeGreaterThan(0)
    expect(live).toBe(cut)
  })
})

const attemptsOf = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))

/** What a kill leaves of session `s`: its durable events, in a store of their own. */
async function copied(store: MemorySessionStore): Promise<MemorySessionStore> {
  const { header, events } = await store.load('s')
  const left = new MemorySessionStore()
  await left.create(header)
  await left.append('s', events)
  await left.close('s')
  return left
}
