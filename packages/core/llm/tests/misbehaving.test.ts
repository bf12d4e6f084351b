// Adapters, catalogs and prices that misbehave, through the public API: what the stream makes of them.
import { Context } from '@deepseek-ai/cordis'
import { addMoney } from '@rein/base'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { BlockAssembler, LlmAdapter, LlmRuntime, costOfUsage, userMessage, type AdapterRequest, type LlmAttempt, type LlmEvent, type LlmRequest, type LlmRuntimeConfig, type ModelInfo, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say } from './fake-adapter.ts'

afterEach(() => {
  vi.useRealTimers()
})

const instant = { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

async function runtime(config: Partial<LlmRuntimeConfig> = instant) {
  const root = new Context()
  await root.plugin(LlmRuntime, config)
  return root
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], ...overrides }
}

async function collect(stream: AsyncIterable<StreamChunk>) {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/** An adapter whose `stream` is the given function, counting its calls. */
function adapterOf(stream: (request: AdapterRequest) => unknown, extra: Partial<LlmAdapter> = {}) {
  const adapter = {
    calls: 0,
    stream(adapterRequest: AdapterRequest) {
      adapter.calls++
      return stream(adapterRequest) as AsyncIterable<StreamChunk>
    },
    ...extra,
  }
  return adapter
}

function attemptsOf(events: LlmEvent[]): LlmAttempt[] {
  return events.filter((event): event is Extract<LlmEvent, { type: 'attempt' }> => event.type === 'attempt')
}

describe('adapters that misbehave', () => {
  it('an adapter that throws a value with no string form (a null-prototype object) ends the stream with a failure instead of throwing out of it', async () => {
    const root = await runtime()
    // oxlint-disable-next-line require-yield -- an adapter that fails before its first chunk
    root.llm.registerAdapter('p', adapterOf(async function* () {
      throw Object.create(null)
    }))
    const chunks = await collect(root.llm.stream(request()))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT' } })
  })

  it('an adapter that throws a string, undefined or a number fails as TRANSPORT with a message', async () => {
    for (const thrown of ['socket hang up', undefined, 42]) {
      const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
      // oxlint-disable-next-line require-yield -- an adapter that fails before its first chunk
      root.llm.registerAdapter('p', adapterOf(async function* () {
        throw thrown
      }))
      const chunks = await collect(root.llm.stream(request()))
      expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: String(thrown) } }])
    }
  })

  it('a stream that is not async-iterable (an array, a promise, undefined) is the adapter package\'s bug: MALFORMED_RESPONSE, not retried as a network fault', async () => {
    for (const made of [() => [say('x')[0]], async () => undefined, () => undefined]) {
      const root = await runtime()
      const adapter = adapterOf(made)
      root.llm.registerAdapter('p', adapter)
      const chunks = await collect(root.llm.stream(request()))
      expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'MALFORMED_RESPONSE', message: expect.stringContaining('provider "p"') } }])
      expect(adapter.calls).toBe(1)
    }
  })

  it('a stream that throws synchronously is one failed attempt, retried', async () => {
    const root = await runtime()
    let calls = 0
    root.llm.registerAdapter('p', adapterOf(() => {
      if (calls++ === 0) throw new Error('sync boom')
      return (async function* () { yield* say('ok') })()
    }))
    const events: LlmEvent[] = []
    const chunks = await collect(root.llm.stream(request({ onEvent: (event) => events.push(event) })))
    expect(chunks).toEqual(say('ok'))
    expect(attemptsOf(events).map((attempt) => attempt.failure?.code)).toEqual(['TRANSPORT', undefined])
  })

  it('a stream that returns without yielding is STREAM_CLOSED, retried, and charged nothing (nothing went out)', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [] }, { chunks: say('ok') }]))
    const events: LlmEvent[] = []
    expect(await collect(root.llm.stream(request({ onEvent: (event) => events.push(event) })))).toEqual(say('ok'))
    const [first] = attemptsOf(events)
    expect(first).toMatchObject({ failure: { code: 'STREAM_CLOSED' } })
    expect(first!.usage).toBeUndefined()
  })

  it('chunks yielded after the finish never reach the caller', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...say('ok'), { type: 'text-delta', index: 0, text: 'late' }, { type: 'finish', reason: 'error' }] }]))
    expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
  })

  it('usage reported twice is the last report, never the sum; a negative, NaN or unsafe-integer report is dropped and takes back nothing', async () => {
    const root = await runtime()
    const chunks: StreamChunk[] = [
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 0 } },
      { type: 'text-delta', index: 0, text: 'abcd' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: -1, outputTokens: 5 } },
      { type: 'usage', usage: { inputTokens: Number.NaN, outputTokens: 5 } },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: -3 } },
      // A count no whole number of tokens can be: at any price its cost would pass what money sums can hold.
      { type: 'usage', usage: { inputTokens: 1e300, outputTokens: 2 } },
      { type: 'finish', reason: 'stop' },
    ]
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks }]))
    const events: LlmEvent[] = []
    const out = await collect(root.llm.stream(request({ onEvent: (event) => events.push(event) })))
    const assembler = new BlockAssembler()
    for (const chunk of out) assembler.push(chunk)
    expect(assembler.usage).toEqual({ inputTokens: 10, outputTokens: 1 })
    expect(attemptsOf(events)[0]).toMatchObject({ usage: { inputTokens: 10, outputTokens: 1 } })
    expect(attemptsOf(events)[0]!.usageEstimated).toBeUndefined()
  })

  it('a tool-call delta for an index no block-start opened still assembles into the call', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [
      { type: 'tool-call-delta', index: 3, id: 'c1', name: 'read', argumentsDelta: '{"a":' },
      { type: 'tool-call-delta', index: 3, id: 'c1', argumentsDelta: '1}' },
      { type: 'finish', reason: 'tool-calls' },
    ] }]))
    const assembler = new BlockAssembler()
    for (const chunk of await collect(root.llm.stream(request()))) assembler.push(chunk)
    expect(assembler.blocks()).toEqual([{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{"a":1}' }])
    expect(assembler.finish).toEqual({ reason: 'tool-calls' })
  })

  it('a stream that never ends and ignores its abort still ends aborted when the caller aborts, and the adapter\'s signal is aborted', async () => {
    const root = await runtime()
    const signals: AbortSignal[] = []
    root.llm.registerAdapter('p', adapterOf((adapterRequest) => (async function* () {
      signals.push(adapterRequest.signal)
      yield { type: 'block-start', index: 0, blockType: 'text' } as StreamChunk
      yield { type: 'text-delta', index: 0, text: 'a' } as StreamChunk
      await new Promise(() => {})
    })()))
    const controller = new AbortController()
    const iterator = root.llm.stream(request({ signal: controller.signal }))[Symbol.asyncIterator]()
    await iterator.next()
    await iterator.next()
    const next = iterator.next()
    controller.abort()
    expect((await next).value).toMatchObject({ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED' } })
    expect((await iterator.next()).done).toBe(true)
    expect(signals[0]!.aborted).toBe(true)
  })
})

describe('catalogs that misbehave', () => {
  it('a resolveModel that throws, rejects or hangs counts as no metadata; the stream still answers', async () => {
    const resolvers = [
      () => { throw new Error('catalog down') },
      () => Promise.reject(new Error('catalog down')),
      () => new Promise<undefined>(() => {}),
    ]
    for (const resolveModel of resolvers) {
      const root = await runtime({ ...instant, catalogTimeoutMs: 5 })
      const adapter = new FakeAdapter([{ chunks: say('ok') }])
      adapter.resolveModel = resolveModel as FakeAdapter['resolveModel']
      root.llm.registerAdapter('p', adapter)
      expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
      expect(await root.llm.modelInfo('p', 'm')).toBeUndefined()
    }
  })

  it('a catalog entry whose reasoning lists no efforts array ends the stream with a failure instead of throwing out of it', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('ok') }], [{ id: 'm', reasoning: {} } as unknown as ModelInfo])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request({ reasoningEffort: 'high' })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'UNSUPPORTED_REASONING_EFFORT', message: 'p/m does not support reasoning effort "high"; it lists no reasoning efforts' } }])
    expect(adapter.requests).toHaveLength(0)
  })

  it('a catalog answer (now or later) keeps its well-formed fields and drops the rest: a string maxTokens is not sent, a NaN context window is not read', async () => {
    const root = await runtime()
    const entry = { id: 'm', maxTokens: '4096', contextWindow: Number.NaN, reasoning: { efforts: ['low', 'high'], default: 'low' }, pricing: { input: 1, output: 2 } }
    const adapter = new FakeAdapter([{ chunks: say('ok') }])
    adapter.resolveModel = async () => entry as unknown as ModelInfo
    root.llm.registerAdapter('p', adapter)
    expect(await root.llm.modelInfo('p', 'm')).toEqual({ id: 'm', reasoning: { efforts: ['low', 'high'], default: 'low' }, pricing: { input: 1, output: 2 } })
    expect(root.llm.resolveModel('p', 'm')).toEqual({ id: 'm', reasoning: { efforts: ['low', 'high'], default: 'low' }, pricing: { input: 1, output: 2 } })
    expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
    expect(adapter.requests[0]!.maxTokens).toBeUndefined()
    expect(adapter.requests[0]!.reasoningEffort).toBe('low')
  })

  it('a well-formed catalog answer is passed on as it is', async () => {
    const root = await runtime()
    const entry: ModelInfo = { id: 'm', maxTokens: 100, contextWindow: 1000, pricing: { input: 0, output: 0, cacheRead: 0 } }
    root.llm.registerAdapter('p', new FakeAdapter([], [entry]))
    expect(await root.llm.modelInfo('p', 'm')).toBe(entry)
  })
})

describe('callers that misbehave', () => {
  it('a maxTokensCap that throws ends the stream with an ABORTED failure instead of throwing out of it, and sends nothing', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request({ maxTokensCap: () => { throw new Error('budget unreadable') } })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'ABORTED', message: expect.stringContaining('budget unreadable') } }])
    expect(adapter.requests).toHaveLength(0)
  })

  it('a maxTokensCap that throws only before the retry ends the stream after the first attempt', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ throws: { code: 'SERVER', message: '503' } }, { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request({ maxTokensCap: () => { if (adapter.requests.length > 0) throw new Error('budget unreadable'); return 100 } })))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'ABORTED' } })
    expect(adapter.requests).toHaveLength(1)
  })

  it('a maxTokensCap that throws after the primary failed over ends the stream ABORTED, not as the primary\'s failure with the fallback logged as skipped', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    const primary = new FakeAdapter([{ throws: { code: 'RATE_LIMIT', message: '429' } }])
    const backup = new FakeAdapter([{ chunks: say('never') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', backup)
    const chunks = await collect(root.llm.stream(request({ fallbacks: [{ provider: 'b', model: 'mb' }], maxTokensCap: () => { if (primary.requests.length > 0) throw new Error('budget unreadable'); return 100 } })))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'ABORTED', message: expect.stringContaining('budget unreadable') } })
    const { message } = (chunks.at(-1) as { failure: { message: string } }).failure
    expect(message).not.toContain('skipped')
    expect(backup.requests).toHaveLength(0)
    expect(root.logger.buffer.some((entry) => entry.type === 'error' && String(entry.args?.join(' ') ?? '').includes('skipped'))).toBe(false)
  })

  it.each([
    ['null', null, 'gave null'],
    ['NaN', Number.NaN, 'gave NaN'],
    ['a negative number', -1, 'gave -1'],
    ['Infinity', Number.POSITIVE_INFINITY, 'gave Infinity'],
    ['a string', '100', 'gave a string'],
  ])('a maxTokensCap that returns %s ends the stream ABORTED saying what it gave, instead of a TypeError or maxTokens NaN', async (_label, bad, said) => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const chunks = await collect(root.llm.stream(request({ maxTokensCap: (() => bad) as () => number })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'ABORTED', message: expect.stringContaining(`maxTokensCap ${said}`) } }])
    expect(adapter.requests).toHaveLength(0)
  })

  it('a maxTokensCap that returns null only before the fallback ends the stream ABORTED instead of throwing a TypeError out of it', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    const primary = new FakeAdapter([{ throws: { code: 'SERVER', message: '503' } }])
    const backup = new FakeAdapter([{ chunks: say('never') }])
    root.llm.registerAdapter('p', primary)
    root.llm.registerAdapter('b', backup)
    const cap = (() => (primary.requests.length > 0 ? null : 100)) as () => number
    const chunks = await collect(root.llm.stream(request({ fallbacks: [{ provider: 'b', model: 'mb' }], maxTokensCap: cap })))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'ABORTED', message: expect.stringContaining('null') } })
    expect(backup.requests).toHaveLength(0)
  })

  it('a maxTokensCap given as a number that is NaN or negative ends the stream ABORTED and sends nothing', async () => {
    for (const bad of [Number.NaN, -5]) {
      const root = await runtime()
      const adapter = new FakeAdapter([{ chunks: say('never') }])
      root.llm.registerAdapter('p', adapter)
      const chunks = await collect(root.llm.stream(request({ maxTokensCap: bad })))
      expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'ABORTED' } })
      expect(adapter.requests).toHaveLength(0)
    }
  })

  it('a maxTokensCap function is read once per attempt, not again for every fallback route vetted', async () => {
    const root = await runtime({ retry: { ...instant.retry, maxRetries: 0 } })
    root.llm.registerAdapter('p', new FakeAdapter([{ throws: { code: 'SERVER', message: '503' } }]))
    const backup = new FakeAdapter([{ chunks: say('ok') }])
    root.llm.registerAdapter('b', backup)
    let reads = 0
    await collect(root.llm.stream(request({ fallbacks: [{ provider: 'b', model: 'mb' }, { provider: 'b', model: 'mc' }], maxTokensCap: () => { reads++; return 50 } })))
    expect(reads).toBe(2)
    expect(backup.requests[0]?.maxTokens).toBe(50)
  })
})

describe('registration', () => {
  it('one adapter on one route registered twice: the second is refused and the first still serves', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: say('ok') }])
    root.llm.registerAdapter('p', adapter)
    expect(() => root.llm.registerAdapter('p', adapter)).toThrow(expect.objectContaining({ code: 'DUPLICATE_ADAPTER' }))
    expect(await collect(root.llm.stream(request()))).toEqual(say('ok'))
  })
})

describe('retries', () => {
  it('a huge Retry-After waits retryAfterCapMs; a negative one falls back to the backoff', async () => {
    const root = await runtime({ retry: { maxRetries: 2, initialDelayMs: 7, maxDelayMs: 100, jitter: 0, retryAfterCapMs: 20 } })
    root.llm.registerAdapter('p', new FakeAdapter([
      { throws: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 1e12 } },
      { throws: { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: -5000 } },
      { chunks: say('ok') },
    ]))
    const events: LlmEvent[] = []
    expect(await collect(root.llm.stream(request({ onEvent: (event) => events.push(event) })))).toEqual(say('ok'))
    expect(events.filter((event) => event.type === 'retry').map((event) => (event as { delayMs: number }).delayMs)).toEqual([20, 14])
  })

  it('the abort fired during the backoff sleep sends no further request and leaves no timer', async () => {
    vi.useFakeTimers()
    const root = await runtime({ retry: { maxRetries: 3, initialDelayMs: 60_000, maxDelayMs: 60_000, jitter: 0, retryAfterCapMs: 0 } })
    const adapter = new FakeAdapter([{ throws: { code: 'SERVER', message: '503' } }, { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const controller = new AbortController()
    const events: LlmEvent[] = []
    const done = collect(root.llm.stream(request({ signal: controller.signal, onEvent: (event) => { events.push(event); if (event.type === 'retry') queueMicrotask(() => controller.abort()) } })))
    const chunks = await done
    expect(chunks).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } }])
    expect(adapter.requests).toHaveLength(1)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('the abort fired while beforeResend is awaited sends nothing more: no attempt-start, no attempt record, no adapter call', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ throws: { code: 'SERVER', message: '503' } }, { chunks: say('never') }])
    root.llm.registerAdapter('p', adapter)
    const controller = new AbortController()
    const events: LlmEvent[] = []
    const chunks = await collect(root.llm.stream(request({
      signal: controller.signal,
      onEvent: (event) => events.push(event),
      beforeResend: async () => { controller.abort() },
    })))
    expect(chunks).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } }])
    expect(adapter.requests).toHaveLength(1)
    expect(events.filter((event) => event.type === 'attempt-start')).toHaveLength(1)
    expect(attemptsOf(events)).toHaveLength(1)
  })

  it('a failure after text was shown ends the stream at once, keeping the text; nothing is retried', async () => {
    const root = await runtime()
    const adapter = new FakeAdapter([
      { chunks: [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'Hal' }], throws: { code: 'SERVER', message: '503' } },
      { chunks: say('never') },
    ])
    root.llm.registerAdapter('p', adapter)
    const assembler = new BlockAssembler()
    for (const chunk of await collect(root.llm.stream(request()))) assembler.push(chunk)
    expect(assembler.interruptedBlocks()).toEqual([{ type: 'text', text: 'Hal' }])
    expect(assembler.finish).toMatchObject({ reason: 'error', failure: { code: 'SERVER' } })
    expect(adapter.requests).toHaveLength(1)
  })
})

describe('money', () => {
  it('a price with many decimals costs to 12 significant digits; a price of 0 costs 0', () => {
    expect(costOfUsage({ input: 0.123456789012345, output: 0 }, { inputTokens: 1, outputTokens: 0 })).toBe(1.23456789012e-7)
    expect(costOfUsage({ input: 0, output: 0 }, { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(0)
  })

  it('cached input is charged at cacheRead/cacheWrite, else the input price', () => {
    expect(costOfUsage({ input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }, { inputTokens: 100, outputTokens: 10, cacheReadTokens: 1000, cacheWriteTokens: 200 })).toBe(0.00047)
    expect(costOfUsage({ input: 1, output: 2 }, { inputTokens: 100, outputTokens: 10, cacheReadTokens: 1000 })).toBe(0.00112)
  })

  it('ten thousand attempts summed with addMoney come to the exact total', () => {
    let total = 0
    const each = costOfUsage({ input: 0.27, output: 1.1, cacheRead: 0.07 }, { inputTokens: 1142, outputTokens: 37, cacheReadTokens: 3000 })
    for (let i = 0; i < 10_000; i++) total = addMoney(total, each)
    expect(each).toBe(0.00055904)
    expect(total).toBe(5.5904)
  })

  it('a catalog price that is not a finite number of 0 to 1e9 is no price: costOf says undefined rather than NaN or Infinity (a NaN cost passes every maxCost, an infinite one fails the log)', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([], [{ id: 'm', pricing: { input: Number.NaN, output: 1 } }, { id: 'n', pricing: { input: 1 } as never }, { id: 'o', pricing: { input: -1, output: 1 } }, { id: 'q', pricing: { input: 1e308, output: 1e308 } }]))
    for (const model of ['m', 'n', 'o', 'q']) {
      await root.llm.modelInfo('p', model)
      expect(root.llm.costOf('p', model, { inputTokens: 10, outputTokens: 10 })).toBeUndefined()
      expect(root.llm.pricing('p', model)).toBeUndefined()
    }
  })
})
