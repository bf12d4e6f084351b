// Found by the audit: a fallback the turn's budget refused (or whose `llm/resend` mark could not be
// saved) left `llm/fallback` in the log, and told the UI of it, though nothing was sent to it.
import type { LlmFailure } from '@rein/llm'
import { MemorySessionStore, type SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../src/index.ts'
import { boot, expectValidLog, types } from './fixtures.ts'

const down: LlmFailure = { code: 'SERVER', message: 'down' }
const noRetries = { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }
const fallbacks = [{ provider: 'scripted', model: 'backup' }]
/** The primary fails after spending `outputTokens`; the backup answers. */
const primaryFails = (outputTokens: number) => (request: { model: string }) => request.model === 'm'
  ? { steps: [{ reasoning: 'thinking' }, { usage: { inputTokens: 10, outputTokens } }], finish: 'error' as const, failure: down }
  : [{ text: 'from backup' }]

const llmTypes = (events: readonly SessionEvent[]) => types(events).filter((type) => type.startsWith('llm/'))

/** Fails, once, to save a batch ending with llm/resend (a full disk for a moment). */
class ResendRefusingStore extends MemorySessionStore {
  override async append(id: string, events: readonly SessionEvent[]) {
    if (events.at(-1)?.type === 'llm/resend') throw new Error('no space left on device')
    return super.append(id, events)
  }
}

describe('a fallback that is not sent', () => {
  it('is not logged as llm/fallback, nor told, when the turn\'s budget refuses it', async () => {
    const { root, llm } = await boot(primaryFails(100), { agent: { maxOutputTokens: 100, fallbacks }, llm: noRetries })
    const agent = await root.agents.create()
    const told: AgentEvent[] = []
    agent.subscribe((event) => { told.push(event) })
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' } })
    expect(llm.requests.map((request) => request.model)).toEqual(['m'])
    expect(llmTypes(agent.session.events)).toEqual(['llm/attempt'])
    expect(told.filter((event) => event.type === 'fallback')).toEqual([])
    expectValidLog(agent.session.events)
  })

  it('is not logged as llm/fallback when the save before it failed', async () => {
    const { root, llm } = await boot(primaryFails(5), { agent: { fallbacks }, llm: noRetries, store: new ResendRefusingStore() })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'SESSION_FLUSH_FAILED' } })
    expect(llm.requests.map((request) => request.model)).toEqual(['m'])
    expect(llmTypes(agent.session.events)).not.toContain('llm/fallback')
  })
})

describe('a fallback that is sent', () => {
  it('is logged once, after its resend mark, and told', async () => {
    const { root } = await boot(primaryFails(5), { agent: { fallbacks }, llm: noRetries })
    const agent = await root.agents.create()
    const told: AgentEvent[] = []
    agent.subscribe((event) => { told.push(event) })
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'from backup' })
    expect(llmTypes(agent.session.events)).toEqual(['llm/attempt', 'llm/resend', 'llm/fallback', 'llm/attempt'])
    expect(told.filter((event) => event.type === 'fallback')).toEqual([expect.objectContaining({ from: { provider: 'scripted', model: 'm' }, to: fallbacks[0] })])
    expect(agent.session.events.find((event) => event.type === 'assistant/message')!.data).toMatchObject({ model: 'backup' })
    expectValidLog(agent.session.events)
  })

  it('is logged when the primary is passed over while it cools down, with no resend before it', async () => {
    const { root, llm } = await boot(primaryFails(5), { agent: { fallbacks }, llm: noRetries })
    const agent = await root.agents.create()
    await agent.send('first')
    const before = agent.session.events.length
    expect(await agent.send('second')).toMatchObject({ reason: 'completed', text: 'from backup' })
    expect(llm.requests.map((request) => request.model)).toEqual(['m', 'backup', 'backup'])
    const second = agent.session.events.slice(before)
    expect(llmTypes(second)).toEqual(['llm/fallback', 'llm/attempt'])
    expect(second.find((event) => event.type === 'llm/fallback')!.data).toMatchObject({ cooldownUntil: expect.any(Number) })
    expectValidLog(agent.session.events)
  })
})
