// The fallback chain: which failures move on, the cool-down that keeps a dead primary out of the
// way for later streams, and fallback entries that are themselves broken.
import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LlmRuntime, userMessage, type LlmEvent, type LlmRequest, type LlmRuntimeConfig, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say, type FakeAttempt } from './fake-adapter.ts'

afterEach(() => {
  vi.useRealTimers()
})

const instant = { maxRetries: 1, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 }

async function runtime(config: Partial<LlmRuntimeConfig> = {}) {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: instant, ...config })
  return root
}

async function collect(root: Context, overrides: Partial<LlmRequest> = {}) {
  const events: LlmEvent[] = []
  const chunks: StreamChunk[] = []
  for await (const chunk of root.llm.stream({ provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) }, ...overrides })) chunks.push(chunk)
  return { chunks, events, finish: chunks.at(-1) as Extract<StreamChunk, { type: 'finish' }> }
}

const fail = (code: NonNullable<FakeAttempt['throws']>['code'], extra: object = {}): FakeAttempt => ({ throws: { code, message: `${code} happened`, ...extra } })
const backup = { fallbacks: [{ provider: 'b', model: 'mb' }] }
const switches = (events: LlmEvent[]) => events.flatMap((event) => event.type === 'fallback' ? [`${event.from.provider}->${event.to.provider} ${event.failure.code}${event.cooldownUntil ? ' cooling' : ''}`] : [])

describe('which failures fall back', () => {
  it('falls back when the provider does not serve the model, without retrying it', async () => {
    const root = await runtime()
    const primary = new FakeAdapter([fail('INVALID_REQUEST', { modelNotFound: true, status: 404 })])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('from b') }]))
    const { chunks, events } = await collect(root, backup)
    expect(chunks).toEqual(say('from b'))
    expect(switches(events)).toEqual(['p->b INVALID_REQUEST'])
    expect(primary.requests).toHaveLength(1)
  })

  it('falls back at once when a server answers with something that is not its API (an HTML page from a proxy)', async () => {
    const root = await runtime()
    const primary = new FakeAdapter([fail('MALFORMED_RESPONSE', { status: 200 })])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('from b') }]))
    const { chunks, events } = await collect(root, backup)
    expect(chunks).toEqual(say('from b'))
    expect(switches(events)).toEqual(['p->b MALFORMED_RESPONSE'])
    expect(primary.requests).toHaveLength(1)
  })

  it('falls back after a route\'s last retry failed having shown only reasoning, discarding it first', async () => {
    const root = await runtime()
    const thinks: FakeAttempt = { chunks: [{ type: 'reasoning-delta', index: 0, text: 'Hmm' }], throws: { code: 'STREAM_CLOSED', message: 'cut' } }
    root.llm.registerAdapter('p', new FakeAdapter([thinks, thinks]))
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('from b') }]))
    const { chunks, events } = await collect(root, backup)
    expect(chunks).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Hmm' }, { type: 'discard' },
      { type: 'reasoning-delta', index: 0, text: 'Hmm' }, { type: 'discard' },
      ...say('from b'),
    ])
    expect(switches(events)).toEqual(['p->b STREAM_CLOSED'])
  })

  it('does not retry a failure the adapter marks permanent (a host that does not resolve), but still falls back', async () => {
    const root = await runtime({ retry: { ...instant, maxRetries: 3 } })
    const primary = new FakeAdapter([fail('TRANSPORT', { permanent: true }), fail('TRANSPORT', { permanent: true })])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('from b') }]))
    const { chunks, events } = await collect(root, backup)
    expect(chunks).toEqual(say('from b'))
    expect(events.filter((event) => event.type === 'retry')).toEqual([])
    expect(switches(events)).toEqual(['p->b TRANSPORT'])
    expect(primary.requests).toHaveLength(1)
  })

  it('ends a permanent failure without a fallback at once, with the failure as it came', async () => {
    const root = await runtime({ retry: { ...instant, maxRetries: 3 } })
    const primary = new FakeAdapter([fail('TRANSPORT', { permanent: true }), fail('TRANSPORT', { permanent: true })])
    root.llm.registerAdapter('p', primary)
    expect((await collect(root)).finish.failure).toEqual({ code: 'TRANSPORT', message: 'TRANSPORT happened', permanent: true })
    expect(primary.requests).toHaveLength(1)
  })

  it('ends a model-not-found without a fallback with the failure as it came', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('INVALID_REQUEST', { modelNotFound: true })]))
    expect((await collect(root)).finish.failure).toEqual({ code: 'INVALID_REQUEST', message: 'INVALID_REQUEST happened', modelNotFound: true })
  })
})

describe('fallback cool-down', () => {
  it('sends later streams straight to the route that worked while the primary cools down', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER')])
    const second = new FakeAdapter([{ chunks: say('one') }, { chunks: say('two') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', second)
    const first = await collect(root, backup)
    expect(switches(first.events)).toEqual(['p->b SERVER'])
    const later = await collect(root, backup)
    expect(later.chunks).toEqual(say('two'))
    expect(switches(later.events)).toEqual(['p->b SERVER cooling'])
    const skip = later.events.find((event) => event.type === 'fallback')
    expect(skip).toMatchObject({ type: 'fallback', from: { provider: 'p', model: 'm' }, to: { provider: 'b', model: 'mb' }, cooldownUntil: expect.any(Number) })
    expect(later.events.filter((event) => event.type === 'attempt').map((event) => event.type === 'attempt' && event.provider)).toEqual(['b'])
    expect(primary.requests).toHaveLength(2)
  })

  it('starts a cool-down on failures that switch at once, such as AUTH', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('AUTH')])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('one') }, { chunks: say('two') }]))
    await collect(root, backup)
    expect(switches((await collect(root, backup)).events)).toEqual(['p->b AUTH cooling'])
    expect(primary.requests).toHaveLength(1)
  })

  it('has no stickiness with a cool-down of 0', async () => {
    const root = await runtime({ fallbackCooldownMs: 0 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER'), { chunks: say('primary is back') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('one') }]))
    await collect(root, backup)
    const later = await collect(root, backup)
    expect(later.chunks).toEqual(say('primary is back'))
    expect(switches(later.events)).toEqual([])
  })

  it('tries the primary again once the cool-down is over', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const root = await runtime({ fallbackCooldownMs: 60_000 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER'), { chunks: say('primary is back') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('one') }, { chunks: say('two') }]))
    await collect(root, backup)
    vi.setSystemTime(Date.now() + 30_000)
    expect((await collect(root, backup)).chunks).toEqual(say('two'))
    vi.setSystemTime(Date.now() + 31_000)
    const after = await collect(root, backup)
    expect(after.chunks).toEqual(say('primary is back'))
    expect(switches(after.events)).toEqual([])
  })

  it('still tries a cooling route when every later route is cooling too', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER'), { chunks: say('primary') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([fail('SERVER'), fail('SERVER')]))
    expect((await collect(root, backup)).finish.failure?.code).toBe('SERVER')
    expect((await collect(root, backup)).chunks).toEqual(say('primary'))
  })

  it('tries a cooling route it passed over when the later routes fail too, rather than fail with the primary never asked', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER'), { chunks: say('primary is back') }])
    const second = new FakeAdapter([{ chunks: say('one') }, fail('SERVER'), fail('SERVER')])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', second)
    await collect(root, backup)
    const later = await collect(root, backup)
    expect(later.chunks).toEqual(say('primary is back'))
    expect(switches(later.events)).toEqual(['p->b SERVER cooling', 'b->p SERVER'])
  })

  it('tries a cooling route it passed over when a later route runs out of quota, and names both failures', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('SERVER'), fail('SERVER'), fail('SERVER'), fail('SERVER')])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('one') }, fail('QUOTA')]))
    await collect(root, backup)
    const later = await collect(root, backup)
    expect(later.finish.failure).toMatchObject({ code: 'SERVER', message: 'SERVER happened (before it: b/mb failed with QUOTA: QUOTA happened)' })
    expect(primary.requests).toHaveLength(4)
  })

  it('names every route that failed in the final failure, not only the last', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('QUOTA', { message: 'Insufficient Balance' })]))
    root.llm.registerAdapter('b', new FakeAdapter([fail('SERVER'), fail('SERVER')]))
    const { finish } = await collect(root, backup)
    expect(finish.failure?.code).toBe('SERVER')
    expect(finish.failure?.message).toBe('SERVER happened (before it: p/m failed with QUOTA: Insufficient Balance)')
  })

  it('does not cool a route down for a failure that does not fall back', async () => {
    const root = await runtime({ fallbackCooldownMs: 600_000 })
    const primary = new FakeAdapter([fail('CONTEXT_WINDOW_EXCEEDED'), { chunks: say('fits now') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', new FakeAdapter([]))
    await collect(root, backup)
    expect((await collect(root, backup)).chunks).toEqual(say('fits now'))
  })
})

describe('broken fallback entries', () => {
  it('serves the primary even when a fallback route has no adapter', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('fine') }]))
    const { chunks } = await collect(root, { fallbacks: [{ provider: 'typo', model: 'x' }] })
    expect(chunks).toEqual(say('fine'))
  })

  it('skips a fallback without an adapter when reached, names it in the final failure, and logs it', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('QUOTA')]))
    const { finish, events } = await collect(root, { fallbacks: [{ provider: 'typo', model: 'x' }] })
    expect(finish.failure).toEqual({ code: 'QUOTA', message: 'QUOTA happened (fallback typo/x skipped: no adapter serves provider "typo"; registered: p)' })
    expect(switches(events)).toEqual([])
    expect(root.logger.buffer.some((entry) => entry.type === 'error' && String(entry.args?.join(' ') ?? '').includes('typo/x'))).toBe(true)
  })

  it('skips a fallback with an effort its model does not list and moves on to the next', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('QUOTA')], [{ id: 'm', reasoning: { efforts: ['max'] } }]))
    root.llm.registerAdapter('b', new FakeAdapter([], [{ id: 'mb', reasoning: { efforts: ['low'] } }]))
    const third = new FakeAdapter([{ chunks: say('third') }])
    root.llm.registerAdapter('c', third)
    const { chunks, events } = await collect(root, { reasoningEffort: 'max', fallbacks: [{ provider: 'b', model: 'mb' }, { provider: 'c', model: 'mc' }] })
    expect(chunks).toEqual(say('third'))
    expect(switches(events)).toEqual(['p->c QUOTA'])
  })
})
