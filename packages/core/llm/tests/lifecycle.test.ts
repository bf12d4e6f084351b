// What happens to streams in flight when the plugins under them go away, and what a stream
// leaves behind once it is done.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { LlmAdapter, LlmRuntime, userMessage, type AdapterRequest, type LlmEvent, type LlmRequest, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say } from './fake-adapter.ts'

const instant = { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

async function runtime() {
  const root = new Context()
  const fiber = await root.plugin(LlmRuntime, instant)
  return { root, fiber }
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], ...overrides }
}

/** Yields `before`, then waits until its signal aborts (and records that it did). */
class HangingAdapter extends LlmAdapter {
  readonly signals: AbortSignal[] = []
  constructor(private readonly before: StreamChunk[] = []) {
    super()
  }

  async *stream(adapterRequest: AdapterRequest): AsyncIterable<StreamChunk> {
    this.signals.push(adapterRequest.signal)
    yield* this.before
    await new Promise((resolve) => adapterRequest.signal.addEventListener('abort', resolve, { once: true }))
    throw new Error('aborted by its signal')
  }
}

const shownText: StreamChunk[] = [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'Hal' }]

async function firstChunks(iterator: AsyncIterator<StreamChunk>, count: number) {
  const out: StreamChunk[] = []
  for (let i = 0; i < count; i++) out.push((await iterator.next()).value as StreamChunk)
  return out
}

async function rest(iterator: AsyncIterator<StreamChunk>) {
  const out: StreamChunk[] = []
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) out.push(next.value)
  return out
}

describe('disposal', () => {
  it('aborts an in-flight attempt when the provider plugin is disposed after a delta, and says so', async () => {
    const { root } = await runtime()
    const adapter = new HangingAdapter(shownText)
    const provider = await root.plugin({ name: 'provider', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', adapter) } })
    const iterator = root.llm.stream(request())[Symbol.asyncIterator]()
    expect(await firstChunks(iterator, 2)).toEqual(shownText)
    const ended = rest(iterator)
    await provider.dispose()
    expect(await ended).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: 'the provider serving route "p" was unloaded mid-request' } }])
    expect(adapter.signals[0]!.aborted).toBe(true)
  })

  it('retries an attempt whose provider was unloaded before any delta on whatever serves the route next', async () => {
    const { root } = await runtime()
    const old = new HangingAdapter()
    const provider = await root.plugin({ name: 'old', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', old) } })
    const events: LlmEvent[] = []
    const done = (async () => {
      const chunks: StreamChunk[] = []
      for await (const chunk of root.llm.stream(request({ onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) chunks.push(chunk)
      return chunks
    })()
    await waitUntil(() => old.signals.length === 1)
    const fresh = new FakeAdapter([{ chunks: say('from the new provider') }])
    await provider.dispose()
    root.llm.registerAdapter('p', fresh)
    expect(await done).toEqual(say('from the new provider'))
    expect(events.map((event) => event.type === 'retry' ? `retry ${event.failure.code}` : event.type)).toEqual(['attempt', 'retry TRANSPORT', 'attempt'])
  })

  it('ends with NO_ADAPTER when nothing serves the route after the provider was unloaded', async () => {
    const { root } = await runtime()
    const old = new HangingAdapter()
    const provider = await root.plugin({ name: 'old', inject: ['llm'], apply: (ctx: Context) => { ctx.llm.registerAdapter('p', old) } })
    const iterator = root.llm.stream(request())[Symbol.asyncIterator]()
    const ended = rest(iterator)
    await waitUntil(() => old.signals.length === 1)
    await provider.dispose()
    const chunks = await ended
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', failure: { code: 'NO_ADAPTER', message: 'no adapter serves provider "p"; registered: none' } }])
  })

  it('aborts a stream still waiting for its model catalog when the llm service is disposed: no request goes out after', async () => {
    const { root, fiber } = await runtime()
    let release = () => {}
    const catalog = new Promise<void>((resolve) => { release = resolve })
    let requests = 0
    root.llm.registerAdapter('p', {
      resolveModel: async () => {
        await catalog
        return { id: 'm' }
      },
      stream: async function* () {
        requests++
        yield* say('answered after the service was stopped')
      },
    } satisfies LlmAdapter)
    const llm = root.llm
    const chunks: StreamChunk[] = []
    const streaming = (async () => { for await (const chunk of llm.stream(request())) chunks.push(chunk) })()
    await fiber.dispose()
    release()
    await streaming
    expect(requests).toBe(0)
    expect(chunks).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the llm service was stopped' } }])
  })

  it('aborts every stream when the llm service itself is disposed', async () => {
    const { root, fiber } = await runtime()
    const adapter = new HangingAdapter(shownText)
    root.llm.registerAdapter('p', adapter)
    const llm = root.llm
    const iterator = llm.stream(request())[Symbol.asyncIterator]()
    await firstChunks(iterator, 2)
    const ended = rest(iterator)
    await fiber.dispose()
    expect(await ended).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the llm service was stopped' } }])
    expect(adapter.signals[0]!.aborted).toBe(true)
    const after: StreamChunk[] = []
    for await (const chunk of llm.stream(request())) after.push(chunk)
    expect(after).toEqual([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'the llm service was stopped' } }])
  })
})

async function waitUntil(check: () => boolean) {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1))
  if (!check()) throw new Error('condition never held')
}

describe('memory', () => {
  it('leaks nothing per stream when the caller passes no signal', async () => {
    setFlagsFromString('--expose_gc')
    const gc = runInNewContext('gc') as () => void
    const { root } = await runtime()
    const answer = say('ok')
    root.llm.registerAdapter('p', { async *stream() { yield* answer } })
    const once = async () => {
      for await (const chunk of root.llm.stream(request())) void chunk
    }
    for (let i = 0; i < 3_000; i++) await once()
    gc()
    const before = process.memoryUsage().heapUsed
    const streams = 30_000
    for (let i = 0; i < streams; i++) await once()
    gc()
    const grown = process.memoryUsage().heapUsed - before
    // The leak this guards against kept about 120 B per stream (3.6 MB here).
    expect(grown).toBeLessThan(streams * 120 / 4)
    // 33,000 streams: a few seconds alone, longer on a busy machine; what it checks is memory, not speed.
  }, 60_000)
})

describe('endpoint', () => {
  it('reports where a route goes when its adapter knows, else undefined', async () => {
    const { root } = await runtime()
    const adapter = new FakeAdapter([])
    adapter.endpoint = (provider: string) => ({ label: `Fake ${provider}`, baseURL: 'http://127.0.0.1:9/v1' })
    root.llm.registerAdapter('p', adapter)
    root.llm.registerAdapter('q', new FakeAdapter([]))
    expect(root.llm.endpoint('p')).toEqual({ label: 'Fake p', baseURL: 'http://127.0.0.1:9/v1' })
    expect(root.llm.endpoint('q')).toBeUndefined()
    expect(root.llm.endpoint('none')).toBeUndefined()
  })
})
