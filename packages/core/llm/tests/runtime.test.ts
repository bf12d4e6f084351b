import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LlmRuntime, userMessage, type LlmEvent, type LlmRequest, type LlmRuntimeConfig, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say, type FakeAttempt } from './fake-adapter.ts'

afterEach(() => {
  vi.useRealTimers()
})

const instant = { retry: { maxRetries: 5, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

async function runtime(config: Partial<LlmRuntimeConfig> = instant) {
  const root = new Context()
  await root.plugin(LlmRuntime, config)
  return root
}

async function collect(stream: AsyncIterable<StreamChunk>) {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], ...overrides }
}

/** A hand-written async iterable over `chunks`, its iterator given `extra` methods (a `return`, say). */
function handIterable(chunks: StreamChunk[], extra: object = {}): AsyncIterable<StreamChunk> {
  let at = 0
  const next = async () => (at < chunks.length ? { done: false as const, value: chunks[at++]! } : { done: true as const, value: undefined })
  return { [Symbol.asyncIterator]: () => ({ next, ...extra }) }
}

const fail = (code: NonNullable<FakeAttempt['throws']>['code'], extra: object = {}): FakeAttempt => ({ throws: { code, message: `${code} happened`, ...extra } })

/** What no adapter should yield, in place of a chunk: reading it throws. */
const MALFORMED = null as unknown as StreamChunk

/** An adapter whose n-th attempt yields the n-th list of reads (batches), counting its attempts. */
function readsPerAttempt(attempts: readonly (readonly StreamChunk[])[][]) {
  const adapter = {
    attempts: 0,
    stream(): AsyncIterable<StreamChunk> {
      throw new Error('streamBatches is used')
    },
    async *streamBatches() {
      const reads = attempts[adapter.attempts++] ?? []
      for (const read of reads) yield read
    },
  }
  return adapter
}

describe('LlmRuntime adapters', () => {
  it('routes a request to the adapter registered for its provider', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('hello') }])
    root.llm.registerAdapter(['p', 'q'], adapter)
    expect(await collect(root.llm.stream(request({ system: 'be brief', maxTokens: 50, temperature: 0.2 })))).toEqual(say('hello'))
    expect(root.llm.providers()).toEqual(['p', 'q'])
    expect(adapter.requests[0]).toMatchObject({ provider: 'p', model: 'm', system: 'be brief', maxTokens: 50, temperature: 0.2 })
    expect(adapter.requests[0]!.signal).toBeInstanceOf(AbortSignal)
  })

  it('registers all routes or none, names a taken route, and says to give the second adapter another route (two provider rows on one default)', async () => {
    const root = await runtime()
    root.llm.registerAdapter('q', new FakeAdapter([]))
    expect(() => root.llm.registerAdapter(['p', 'q'], new FakeAdapter([]))).toThrow(expect.objectContaining({
      code: 'DUPLICATE_ADAPTER',
      message: 'provider route "q" is already served by another adapter: give this one another route (a provider row\'s provider option, e.g. provider: q2), or remove or dispose the other',
    }))
    expect(root.llm.providers()).toEqual(['q'])
  })

  it('refuses a route that is not a non-empty string and an adapter that cannot stream, registering nothing', async () => {
    const root = await runtime()
    for (const routes of ['', [' '], [42], ['p', ''], null]) {
      expect(() => root.llm.registerAdapter(routes as unknown as string[], new FakeAdapter([]))).toThrow(expect.objectContaining({ code: 'INVALID_ROUTE' }))
    }
    for (const adapter of [{}, null, { stream: 'no' }]) {
      expect(() => root.llm.registerAdapter('p', adapter as unknown as FakeAdapter)).toThrow(expect.objectContaining({ code: 'INVALID_ADAPTER' }))
    }
    expect(root.llm.providers()).toEqual([])
  })

  it('ends a request that is not one with INVALID_REQUEST, never a raw TypeError', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([]))
    const bad: unknown[] = [undefined, null, 'hi', { model: 'm', messages: [] }, { provider: 'p', model: 'm' }, { provider: 'p', model: 'm', messages: [], fallbacks: 'b' }, { provider: 'p', model: 'm', messages: [], fallbacks: [{ provider: 'b' }] }, { provider: 'p', model: 'm', messages: [], fallbacks: [null] }]
    for (const given of bad) {
      const chunks = await collect(root.llm.stream(given as LlmRequest))
      expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'INVALID_REQUEST', message: expect.stringMatching(/^the request('s)? /) } }])
    }
  })

  it('skips a fallback entry with an empty model when the chain reaches it; the primary still answers', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('from p') }]))
    const chunks = await collect(root.llm.stream(request({ fallbacks: [{ provider: 'p', model: '' }] })))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop' })
  })

  it('ends with NO_ADAPTER, listing what is registered, for an unknown route', async () => {
    const root = await runtime()
    root.llm.registerAdapter('openai', new FakeAdapter([]))
    expect(await collect(root.llm.stream(request({ provider: 'deepseek' })))).toEqual([{
      type: 'finish', reason: 'error', failure: { code: 'NO_ADAPTER', message: 'no adapter serves provider "deepseek"; registered: openai' },
    }])
  })

  it('removes the routes when the registering plugin is disposed', async () => {
    const root = await runtime()
    const fiber = await root.plugin({ name: 'provider', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', new FakeAdapter([])) } })
    expect(root.llm.providers()).toEqual(['p'])
    await fiber.dispose()
    expect(root.llm.providers()).toEqual([])
  })

  it('hot-swaps: disposing the old provider ends its shown stream with an error, the next call goes to the new one', async () => {
    const root = await runtime()
    const gate = new Promise<void>(() => {})
    const old = new FakeAdapter([{ chunks: say('from old'), gate }])
    const oldPlugin = await root.plugin({ name: 'old', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', old) } })
    const running = root.llm.stream(request())[Symbol.asyncIterator]()
    expect((await running.next()).value).toEqual({ type: 'block-start', index: 0, blockType: 'text' })
    expect((await running.next()).value).toEqual({ type: 'text-delta', index: 0, text: 'from old' })
    await oldPlugin.dispose()
    const fresh = new FakeAdapter([{ chunks: say('from new') }])
    await root.plugin({ name: 'new', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', fresh) } })
    const rest: StreamChunk[] = []
    for (let next = await running.next(); !next.done; next = await running.next()) rest.push(next.value)
    expect(rest.at(-1)).toEqual({ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: 'the provider serving route "p" was unloaded mid-request' } })
    expect(await collect(root.llm.stream(request()))).toEqual(say('from new'))
    expect([old.requests.length, fresh.requests.length]).toEqual([1, 1])
  })
})

describe('LlmRuntime retry', () => {
  it('retries a tool-calls finish that carried no call and no text, as it retries an empty stop', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: [{ type: 'finish', reason: 'tool-calls' }] }, { chunks: say('ok') }])
    root.llm.registerAdapter('p', adapter)
    const events: LlmEvent[] = []
    const chunks = await collect(root.llm.stream(request({ onEvent: (event) => { if (event.type === 'retry') events.push(event) } })))
    expect(chunks).toEqual(say('ok'))
    expect(events.map((event) => event.type === 'retry' && event.failure.code)).toEqual(['EMPTY_RESPONSE'])
  })

  it('retries retryable failures before any delta, reporting each retry, then succeeds', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([fail('RATE_LIMIT'), { chunks: [{ type: 'usage', usage: { inputTokens: 1, outputTokens: 0 } }, { type: 'finish', reason: 'stop' }] }, fail('SERVER'), { chunks: say('ok') }])
    root.llm.registerAdapter('p', adapter)
    const events: LlmEvent[] = []
    const emitted: unknown[] = []
    root.on('llm/retry', (event) => { emitted.push(event.failure.code) })
    const chunks = await collect(root.llm.stream(request({ onEvent: (event) => { if (!event.type.startsWith('attempt')) events.push(event) } })))
    expect(chunks).toEqual(say('ok'))
    expect(events.map((event) => event.type === 'retry' && [event.attempt, event.failure.code])).toEqual([
      [1, 'RATE_LIMIT'], [2, 'EMPTY_RESPONSE'], [3, 'SERVER'],
    ])
    expect(emitted).toEqual(['RATE_LIMIT', 'EMPTY_RESPONSE', 'SERVER'])
    expect(adapter.requests).toHaveLength(4)
  })

  it('gives up after maxRetries and ends with the last failure', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 2 } })
    const adapter = new FakeAdapter([fail('SERVER'), fail('OVERLOADED'), fail('TIMEOUT'), { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request()))).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'TIMEOUT', message: 'TIMEOUT happened' } }])
    expect(adapter.requests).toHaveLength(3)
  })

  it.each(['AUTH', 'QUOTA', 'INVALID_REQUEST', 'CONTEXT_WINDOW_EXCEEDED', 'MALFORMED_RESPONSE'] as const)('never retries %s', async (code) => {
    const root = await runtime()
    const adapter = new FakeAdapter([fail(code), { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request()))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code, message: `${code} happened` } }])
    expect(adapter.requests).toHaveLength(1)
  })

  it('does not retry once a delta was shown, and keeps what was shown', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([
      { chunks: [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'Hal' }], throws: { code: 'STREAM_CLOSED', message: 'connection dropped' } },
      { chunks: say('never') },
    ])
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request()))).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hal' },
      { type: 'finish', reason: 'error', failure: { code: 'STREAM_CLOSED', message: 'connection dropped' } },
    ])
    expect(adapter.requests).toHaveLength(1)
  })

  it('retries an attempt that failed after showing only reasoning, sending a discard before the retry shows anything', async () => {
    const root = await runtime()
    const thought: StreamChunk[] = [{ type: 'block-start', index: 0, blockType: 'reasoning' }, { type: 'reasoning-delta', index: 0, text: 'Hmm' }]
    const adapter = new FakeAdapter([{ chunks: thought, throws: { code: 'STREAM_CLOSED', message: 'connection dropped' } }, { chunks: say('ok') }])
    root.llm.registerAdapter('p', adapter)
    const seen: string[] = []
    const chunks: StreamChunk[] = []
    for await (const chunk of root.llm.stream(request({ onEvent: (event) => { seen.push(event.type) } }))) {
      chunks.push(chunk)
      seen.push(chunk.type)
    }
    expect(chunks).toEqual([...thought, { type: 'discard' }, ...say('ok')])
    expect(adapter.requests).toHaveLength(2)
    // The failed attempt is reported, then the retry; the discard comes just before the next attempt starts.
    expect(seen.slice(0, 7)).toEqual(['attempt-start', 'block-start', 'reasoning-delta', 'attempt', 'retry', 'discard', 'attempt-start'])
  })

  it('retries a reasoning-only answer that ended empty, as it retries an empty stop', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: [{ type: 'reasoning-delta', index: 0, text: 'Hmm' }, { type: 'finish', reason: 'stop' }] }, { chunks: say('ok') }])
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request()))).toEqual([{ type: 'reasoning-delta', index: 0, text: 'Hmm' }, { type: 'discard' }, ...say('ok')])
  })

  it('does not retry once text was shown after the reasoning, even text that is only whitespace', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([
      { chunks: [{ type: 'reasoning-delta', index: 0, text: 'Hmm' }, { type: 'text-delta', index: 1, text: '\n\n' }], throws: { code: 'STREAM_CLOSED', message: 'connection dropped' } },
      { chunks: say('never') },
    ])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request()))
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'error', failure: { code: 'STREAM_CLOSED', message: 'connection dropped' } })
    expect(chunks.some((chunk) => chunk.type === 'discard')).toBe(false)
    expect(adapter.requests).toHaveLength(1)
  })

  it('ends with the failure, keeping the reasoning shown, when the last retry fails after reasoning only', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 1 } })
    const thinks = (text: string): FakeAttempt => ({ chunks: [{ type: 'reasoning-delta', index: 0, text }], throws: { code: 'SERVER', message: `cut after ${text}` } })
    const adapter = new FakeAdapter([thinks('one'), thinks('two'), { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request()))).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'one' },
      { type: 'discard' },
      { type: 'reasoning-delta', index: 0, text: 'two' },
      { type: 'finish', reason: 'error', failure: { code: 'SERVER', message: 'cut after two' } },
    ])
    expect(adapter.requests).toHaveLength(2)
  })

  it('drops a discard an adapter yields: only the runtime takes back what was shown', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [{ type: 'text-delta', index: 0, text: 'kept' }, { type: 'discard' }, ...say('ok').slice(2)] }]))
    expect(await collect(root.llm.stream(request()))).toEqual([{ type: 'text-delta', index: 0, text: 'kept' }, ...say('ok').slice(2)])
  })

  it('shows nothing of a failed attempt: held chunks are dropped, not replayed', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([
      { chunks: [{ type: 'block-start', index: 0, blockType: 'text' }], throws: { code: 'TRANSPORT', message: 'reset' } },
      { chunks: say('clean') },
    ]))
    expect(await collect(root.llm.stream(request()))).toEqual(say('clean'))
  })

  it('treats a stream that ends without finish as STREAM_CLOSED and retries it', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [] }, { chunks: say('second') }]))
    const events: LlmEvent[] = []
    expect(await collect(root.llm.stream(request({ onEvent: (event) => { if (!event.type.startsWith('attempt')) events.push(event) } })))).toEqual(say('second'))
    expect(events[0]).toMatchObject({ type: 'retry', failure: { code: 'STREAM_CLOSED' } })
  })

  it('honours Retry-After up to the cap, with backoff otherwise', async () => {
    vi.useFakeTimers()
    const root = await runtime({ retry: { maxRetries: 5, initialDelayMs: 500, maxDelayMs: 10_000, jitter: 0, retryAfterCapMs: 30_000 } })
    root.llm.registerAdapter('p', new FakeAdapter([fail('RATE_LIMIT', { retryAfterMs: 2_000 }), fail('RATE_LIMIT', { retryAfterMs: 120_000 }), fail('SERVER'), { chunks: say('ok') }]))
    const delays: number[] = []
    const done = collect(root.llm.stream(request({ onEvent: (event) => { if (event.type === 'retry') delays.push(event.delayMs) } })))
    await vi.runAllTimersAsync()
    expect(await done).toEqual(say('ok'))
    expect(delays).toEqual([2_000, 30_000, 2_000])
  })

  it('stops waiting and ends aborted when the signal fires during a backoff', async () => {
    vi.useFakeTimers()
    const root = await runtime({ retry: { ...instant.retry, initialDelayMs: 5_000, maxDelayMs: 5_000 } })
    const adapter = new FakeAdapter([fail('SERVER'), { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const controller = new AbortController()
    const done = collect(root.llm.stream(request({ signal: controller.signal, onEvent: (event) => { if (event.type === 'retry') controller.abort() } })))
    expect(await done).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } }])
    expect(adapter.requests).toHaveLength(1)
  })
})

describe('LlmRuntime fallback', () => {
  const chain = { fallbacks: [{ provider: 'b', model: 'mb' }, { provider: 'c', model: 'mc' }] }

  it('moves down the chain after retries run out, reporting each switch', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 1 } })
    const a = new FakeAdapter([fail('SERVER'), fail('SERVER')])
    const b = new FakeAdapter([fail('QUOTA')])
    const c = new FakeAdapter([{ chunks: say('from c') }])
    root.llm.registerAdapter('p', a)
    root.llm.registerAdapter('b', b)
    root.llm.registerAdapter('c', c)
    const events: LlmEvent[] = []
    const emitted: string[] = []
    root.on('llm/fallback', (event) => { emitted.push(`${event.from.provider}->${event.to.provider}`) })
    expect(await collect(root.llm.stream(request({ ...chain, onEvent: (event) => { if (!event.type.startsWith('attempt')) events.push(event) } })))).toEqual(say('from c'))
    expect(events.map((event) => event.type === 'fallback' ? `fallback ${event.from.provider}->${event.to.provider} ${event.failure.code}` : `retry ${event.provider}`)).toEqual([
      'retry p', 'fallback p->b SERVER', 'fallback b->c QUOTA',
    ])
    expect(emitted).toEqual(['p->b', 'b->c'])
    expect(c.requests[0]).toMatchObject({ provider: 'c', model: 'mc' })
  })

  it('never falls back on INVALID_REQUEST or CONTEXT_WINDOW_EXCEEDED, and says why', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('CONTEXT_WINDOW_EXCEEDED')]))
    const b = new FakeAdapter([{ chunks: say('never') }])
    root.llm.registerAdapter('b', b)
    root.llm.registerAdapter('c', new FakeAdapter([]))
    const [finish] = await collect(root.llm.stream(request(chain)))
    expect(finish).toEqual({
      type: 'finish', reason: 'error',
      failure: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'CONTEXT_WINDOW_EXCEEDED happened (not sent to a fallback model: another model would fail the same way)' },
    })
    expect(b.requests).toHaveLength(0)
  })

  it('skips a route already tried', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    const a = new FakeAdapter([fail('SERVER')])
    root.llm.registerAdapter('p', a)
    const chunks = await collect(root.llm.stream(request({ fallbacks: [{ provider: 'p', model: 'm' }] })))
    expect(chunks.at(-1)).toMatchObject({ reason: 'error', failure: { code: 'SERVER' } })
    expect(a.requests).toHaveLength(1)
  })
})

describe('LlmRuntime beforeResend', () => {
  it('is awaited before each retry and fallback, after the failed attempt was reported and before the next is sent, never before the first', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 1 } })
    const log: string[] = []
    const a = new FakeAdapter([fail('SERVER'), fail('SERVER')])
    const b = new FakeAdapter([{ chunks: say('from b') }])
    root.llm.registerAdapter('p', a)
    root.llm.registerAdapter('b', b)
    const chunks = await collect(root.llm.stream(request({
      maxTokens: 64,
      fallbacks: [{ provider: 'b', model: 'mb' }],
      onEvent: (event) => { if (event.type === 'attempt-start' || event.type === 'attempt') log.push(`${event.type} ${event.provider} ${event.retry}`) },
      beforeResend: async (next) => {
        await new Promise((resolve) => setImmediate(resolve))
        log.push(`resend ${JSON.stringify(next)}`)
      },
    })))
    expect(chunks).toEqual(say('from b'))
    expect(log).toEqual([
      'attempt-start p 0', 'attempt p 0',
      'resend {"provider":"p","model":"m","retry":1,"fallback":0,"maxTokens":64}', 'attempt-start p 1', 'attempt p 1',
      'resend {"provider":"b","model":"mb","retry":0,"fallback":1,"maxTokens":64}', 'attempt-start b 0', 'attempt b 0',
    ])
  })

  it('sends nothing more when it rejects: the stream ends ABORTED, saying why', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([fail('SERVER'), { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request({ beforeResend: () => Promise.reject(new Error('disk full')) })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'ABORTED', message: 'the caller could not prepare the next attempt, so it was not sent: disk full' } }])
    expect(adapter.requests).toHaveLength(1)
  })
})

describe('LlmRuntime models, efforts and cost', () => {
  const models = [
    { id: 'thinker', maxTokens: 8_000, reasoning: { efforts: ['off', 'low', 'high'], default: 'high' }, pricing: { input: 2, output: 8, cacheRead: 0.5 } },
    { id: 'plain', contextWindow: 32_000 },
  ]

  it('applies the catalog defaults for max tokens and effort', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('a') }, { chunks: say('b') }], models)
    root.llm.registerAdapter('p', adapter)
    await collect(root.llm.stream(request({ model: 'thinker' })))
    await collect(root.llm.stream(request({ model: 'thinker', maxTokens: 100, reasoningEffort: 'low' })))
    expect(adapter.requests.map((r) => [r.maxTokens, r.reasoningEffort])).toEqual([[8_000, 'high'], [100, 'low']])
  })

  it('refuses an effort the model does not list, before any I/O, and never clamps', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([], models)
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request({ model: 'thinker', reasoningEffort: 'max' })))).toEqual([{
      type: 'finish', reason: 'error',
      failure: { code: 'UNSUPPORTED_REASONING_EFFORT', message: 'p/thinker does not support reasoning effort "max"; it supports off, low, high' },
    }])
    const [plain] = await collect(root.llm.stream(request({ model: 'plain', reasoningEffort: 'low' })))
    expect(plain).toMatchObject({ failure: { code: 'UNSUPPORTED_REASONING_EFFORT', message: 'p/plain does not support reasoning effort "low"; it lists no reasoning efforts' } })
    expect(adapter.requests).toHaveLength(0)
  })

  it('passes unknown models through: the catalog is advisory', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('fine') }], models)
    root.llm.registerAdapter('p', adapter)
    expect(await collect(root.llm.stream(request({ model: 'brand-new', reasoningEffort: 'extreme' })))).toEqual(say('fine'))
    expect(adapter.requests[0]).toMatchObject({ model: 'brand-new', reasoningEffort: 'extreme' })
  })

  it('prices usage from the catalog, with cache reads at their own rate', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([], models))
    expect(root.llm.costOf('p', 'thinker', { inputTokens: 1_000_000, cacheReadTokens: 2_000_000, outputTokens: 500_000, reasoningTokens: 100_000 })).toBe(2 + 1 + 4)
    expect(root.llm.costOf('p', 'plain', { inputTokens: 1, outputTokens: 1 })).toBeUndefined()
    expect(root.llm.costOf('nope', 'x', { inputTokens: 1, outputTokens: 1 })).toBeUndefined()
  })
})

describe('LlmRuntime cancellation and failures', () => {
  it('shows nothing of a read that broke partway, even after a delta in it: the fallback answers alone', async () => {
    const root = await runtime()
    // A malformed chunk after a delta, in the same read: the read fails before it is shown.
    const broken = readsPerAttempt([[[{ type: 'text-delta', index: 0, text: 'never shown' }, MALFORMED]]])
    const fallback = readsPerAttempt([[say('ok')]])
    root.llm.registerAdapter('p', broken)
    root.llm.registerAdapter('q', fallback)
    expect(await collect(root.llm.stream(request({ fallbacks: [{ provider: 'q', model: 'm' }] })))).toEqual(say('ok'))
    expect([broken.attempts, fallback.attempts]).toEqual([1, 1])
  })

  it('does not retry an attempt whose later read breaks after an earlier read was shown', async () => {
    const root = await runtime()
    const adapter = readsPerAttempt([[[{ type: 'text-delta', index: 0, text: 'shown' }], [{ type: 'text-delta', index: 0, text: ' and more' }, MALFORMED]]])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request()))
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'shown' }])
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error' })
    expect(adapter.attempts).toBe(1)
  })

  it('ends aborted when the caller aborts mid-stream, even if the adapter ignores its signal', async () => {
    const root = await runtime()
    const controller = new AbortController()
    let adapterSignal!: AbortSignal
    root.llm.registerAdapter('p', {
      async *stream(adapterRequest) {
        adapterSignal = adapterRequest.signal
        yield { type: 'text-delta', index: 0, text: 'partial' }
        await new Promise(() => {})
      },
    })
    const chunks: StreamChunk[] = []
    for await (const chunk of root.llm.stream(request({ signal: controller.signal }))) {
      chunks.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(chunks).toEqual([
      { type: 'text-delta', index: 0, text: 'partial' },
      { type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } },
    ])
    expect(adapterSignal.aborted).toBe(true)
  })

  it('stops the adapter when the consumer stops reading', async () => {
    const root = await runtime()
    let adapterSignal!: AbortSignal
    root.llm.registerAdapter('p', {
      async *stream(adapterRequest) {
        adapterSignal = adapterRequest.signal
        yield { type: 'text-delta', index: 0, text: 'a' }
        yield { type: 'text-delta', index: 0, text: 'b' }
      },
    })
    for await (const chunk of root.llm.stream(request())) if (chunk.type === 'text-delta') break
    expect(adapterSignal.aborted).toBe(true)
  })

  it('closes a finished attempt without aborting its signal (nothing is left to stop)', async () => {
    const root = await runtime()
    let adapterSignal!: AbortSignal
    let closed = false
    root.llm.registerAdapter('p', {
      async *stream(adapterRequest) {
        adapterSignal = adapterRequest.signal
        try {
          yield* say('ok')
        } finally {
          closed = true
        }
      },
    })
    expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
    await vi.waitFor(() => expect(closed).toBe(true))
    expect(adapterSignal.aborted).toBe(false)
  })

  it('stops a finished adapter that cannot be told to stop (its iterator has no return)', async () => {
    const root = await runtime()
    let adapterSignal!: AbortSignal
    root.llm.registerAdapter('p', {
      stream(adapterRequest) {
        adapterSignal = adapterRequest.signal
        // A hand-written iterable: it may still hold its request after the finish (usage after finish_reason).
        return handIterable(say('ok'))
      },
    })
    expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
    expect(adapterSignal.aborted).toBe(true)
  })

  it('turns a plain thrown error into a TRANSPORT failure', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    // oxlint-disable-next-line require-yield -- an adapter that fails before its first chunk
    root.llm.registerAdapter('p', { async *stream() { throw new TypeError('fetch failed') } })
    expect(await collect(root.llm.stream(request()))).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: 'fetch failed' } }])
  })

  // Adapters whose iteration itself misbehaves: the stream still never throws, and the attempt is
  // reported, removed from the in-flight set and its request stopped, whatever the adapter did.
  it.each([
    // Its package's bug, not the network: not taken for a transport fault (see misbehaving.test.ts).
    ['returns something that is not async-iterable', () => ({}), 'MALFORMED_RESPONSE'],
    ['returns an iterable whose iterator cannot be made', () => ({ [Symbol.asyncIterator]: () => { throw new TypeError('no iterator today') } }), 'TRANSPORT'],
  ])('ends a stream whose adapter %s with a failure, not a throw', async (_case, make, code) => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    root.llm.registerAdapter('p', { stream: make as never })
    const attempts: LlmEvent[] = []
    const chunks = await collect(root.llm.stream(request({ onEvent: (event) => { if (event.type === 'attempt') attempts.push(event) } })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code, message: expect.any(String) } }])
    expect(attempts).toHaveLength(1)
  })

  it('finishes an attempt whose iterator throws when told to stop', async () => {
    const root = await runtime()
    let adapterSignal!: AbortSignal
    root.llm.registerAdapter('p', {
      stream(adapterRequest) {
        adapterSignal = adapterRequest.signal
        return handIterable(say('ok'), { return: () => { throw new Error('return is broken') } })
      },
    })
    const attempts: LlmEvent[] = []
    for await (const chunk of root.llm.stream(request({ onEvent: (event) => { if (event.type === 'attempt') attempts.push(event) } }))) {
      if (chunk.type === 'text-delta') break
    }
    expect(attempts).toHaveLength(1)
    expect(adapterSignal.aborted).toBe(true)
  })

  it('keeps going when an onEvent callback or an llm/retry listener throws', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([fail('SERVER'), { chunks: say('ok') }]))
    root.on('llm/retry', () => { throw new Error('listener bug') })
    root.on('llm/retry', (() => Promise.reject(new Error('async listener bug'))) as () => void)
    const chunks = await collect(root.llm.stream(request({ onEvent: () => { throw new Error('callback bug') } })))
    expect(chunks).toEqual(say('ok'))
    // The callback fails for both attempts' start and end records and the retry (5); each llm/retry listener fails (2).
    await vi.waitFor(() => expect(root.logger.buffer.filter((message) => message.type === 'error')).toHaveLength(7))
  })
})
