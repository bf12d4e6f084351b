// Adapters may look their models up (a catalog fetched from the server): every stream waits for
// the answer, and the synchronous paths read it afterwards.
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { LlmRuntime, userMessage, type LlmEvent, type ModelInfo } from '../src/index.ts'
import { FakeAdapter, say } from './fake-adapter.ts'

class LookupAdapter extends FakeAdapter {
  readonly lookups: { model: string; signal: AbortSignal | undefined }[] = []
  constructor(private readonly catalog: Record<string, ModelInfo>, answers = 5) {
    super(Array.from({ length: answers }, () => ({ chunks: say('ok') })))
  }

  override resolveModel(_provider: string, model: string, signal?: AbortSignal) {
    this.lookups.push({ model, signal })
    return new Promise<ModelInfo | undefined>((resolve) => setTimeout(() => resolve(this.catalog[model]), 5))
  }
}

async function runtime() {
  const root = new Context()
  await root.plugin(LlmRuntime, {})
  return root
}

const limited: ModelInfo = { id: 'm', maxTokens: 321, pricing: { input: 1, output: 2 } } as ModelInfo

describe('asynchronous model metadata', () => {
  it('waits for the lookup before the first attempt, passes the signal, and applies the catalog', async () => {
    const root = await runtime()
    const adapter = new LookupAdapter({ m: limited })
    root.llm.registerAdapter('p', adapter)
    const controller = new AbortController()
    for await (const _chunk of root.llm.stream({ provider: 'p', model: 'm', messages: [userMessage('hi')], signal: controller.signal })) { /* drain */ }
    expect(adapter.requests[0]?.maxTokens).toBe(321)
    expect(adapter.lookups[0]?.signal).toBe(controller.signal)
    expect(root.llm.resolveModel('p', 'm')).toEqual(limited)
    expect(await root.llm.modelInfo('p', 'm')).toEqual(limited)
    expect(root.llm.costOf('p', 'm', { inputTokens: 1_000_000, outputTokens: 0 })).toBe(1)
    expect(adapter.lookups).toHaveLength(1)
  })

  it('treats a lookup that fails as a model without metadata', async () => {
    const root = await runtime()
    const adapter = new LookupAdapter({})
    adapter.resolveModel = () => Promise.reject(new Error('catalog endpoint down'))
    root.llm.registerAdapter('p', adapter)
    expect(await root.llm.modelInfo('p', 'm')).toBeUndefined()
    const chunks = []
    for await (const chunk of root.llm.stream({ provider: 'p', model: 'm', messages: [userMessage('hi')] })) chunks.push(chunk)
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
  })
})

describe('a lookup that never answers', () => {
  it('does not hold a cancelled stream', async () => {
    const root = await runtime()
    const adapter = new LookupAdapter({})
    adapter.resolveModel = () => new Promise<undefined>(() => {})
    root.llm.registerAdapter('p', adapter)
    const controller = new AbortController()
    const chunks: unknown[] = []
    const done = (async () => {
      for await (const chunk of root.llm.stream({ provider: 'p', model: 'm', messages: [userMessage('hi')], signal: controller.signal })) chunks.push(chunk)
    })()
    setTimeout(() => controller.abort(), 5)
    await done
    expect(chunks).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' } }])
    expect(adapter.requests).toHaveLength(0)
  })

  it('remembers that a lookup found nothing instead of asking every step', async () => {
    const root = await runtime()
    const adapter = new LookupAdapter({})
    root.llm.registerAdapter('p', adapter)
    await root.llm.modelInfo('p', 'm')
    await root.llm.modelInfo('p', 'm')
    expect(adapter.lookups).toHaveLength(1)
  })
})

describe('attempt-start', () => {
  it('announces each attempt before it is sent, with what it asks for, and pairs with its attempt record', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new LookupAdapter({ m: limited }))
    const events: LlmEvent[] = []
    const heard: LlmEvent[] = []
    root.on('llm/attempt-start', (event) => { heard.push(event) })
    for await (const _chunk of root.llm.stream({ provider: 'p', model: 'm', temperature: 0.2, messages: [userMessage('hi')], onEvent: (event) => events.push(event) })) { /* drain */ }
    expect(events.map((event) => event.type)).toEqual(['attempt-start', 'attempt'])
    const [start, end] = events
    expect(start).toMatchObject({ type: 'attempt-start', provider: 'p', model: 'm', retry: 0, fallback: 0, maxTokens: 321, temperature: 0.2 })
    expect(end).toMatchObject({ type: 'attempt', startedAt: (start as { startedAt: number }).startedAt })
    expect(heard).toHaveLength(1)
  })
})

describe('price overrides (Config prices)', () => {
  it('replace a catalog\'s price, and price a model no catalog knows, everywhere a price is read', async () => {
    const root = new Context()
    await root.plugin(LlmRuntime, { prices: { p: { m: { input: 3, output: 6 }, local: { input: 0.5, output: 1, cacheRead: 0.1 } } } })
    root.llm.registerAdapter('p', new LookupAdapter({ m: limited }))
    expect(await root.llm.modelInfo('p', 'm')).toEqual({ ...limited, pricing: { input: 3, output: 6 } })
    expect(root.llm.costOf('p', 'm', { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(9)
    // No entry is invented for a model no catalog knows (it would claim no reasoning efforts): its price is found all the same.
    expect(root.llm.resolveModel('p', 'local')).toBeUndefined()
    expect(root.llm.pricing('p', 'local')).toEqual({ input: 0.5, output: 1, cacheRead: 0.1 })
    expect(root.llm.costOf('p', 'local', { inputTokens: 0, cacheReadTokens: 1_000_000, outputTokens: 0 })).toBe(0.1)
    // Another route's model of the same name keeps its own (absent) price.
    expect(root.llm.costOf('q', 'm', { inputTokens: 1, outputTokens: 1 })).toBeUndefined()
  })

  it('refuses a malformed price at load, naming the route and model', async () => {
    const root = new Context()
    expect(() => LlmRuntime.Config({ prices: { p: { m: { input: -1, output: 1 } } } } as never)).toThrow('$.prices.p.m.input expected number >= 0 but got -1')
    expect(() => LlmRuntime.Config({ prices: { p: { 'gpt-4o': { input: 1 } } } } as never)).toThrow('$.prices.p.gpt-4o.output missing required value')
    expect(() => LlmRuntime.Config({ prices: { p: { m: { input: '1', output: 2 } } } } as never)).toThrow('$.prices.p.m.input expected number')
    await expect(root.plugin(LlmRuntime, { prices: { p: { m: { input: 1 } } } } as never)).rejects.toThrow('$.prices.p.m.output missing required value')
    // What the schema lets through: a misspelt key (cache reads charged at the input price) and infinite or NaN prices.
    await expect(root.plugin(LlmRuntime, { prices: { p: { m: { input: 1, output: 2, cache_read: 0.1 } } } } as never)).rejects.toThrow('prices.p.m.cache_read: unknown price; use input, output, cacheRead or cacheWrite')
    await expect(root.plugin(LlmRuntime, { prices: { p: { m: { input: Number.POSITIVE_INFINITY, output: 2 } } } })).rejects.toThrow('$.prices.p.m.input expected number <= 1000000000 but got Infinity')
    await expect(root.plugin(LlmRuntime, { prices: { p: { m: { input: 1, output: Number.NaN } } } })).rejects.toThrow('prices.p.m.output: a price must be a finite number')
    // Finite, yet a cost at it would not be: 1e308 times the tokens is Infinity, which no log or span can hold.
    await expect(root.plugin(LlmRuntime, { prices: { p: { m: { input: 1e308, output: 2 } } } })).rejects.toThrow('$.prices.p.m.input expected number <= 1000000000 but got 1e+308')
  })
})
