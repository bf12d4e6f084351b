import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { LlmAdapter, LlmRuntime, userMessage, type AdapterRequest, type LlmRequest, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say } from './fake-adapter.ts'

/** An adapter whose attempts arrive as scripted reads: `streamBatches` yields each read whole. */
class ReadsAdapter extends LlmAdapter {
  constructor(private readonly attempts: StreamChunk[][][]) {
    super()
  }

  async *stream(request: AdapterRequest): AsyncIterable<StreamChunk> {
    for await (const read of this.streamBatches(request)) yield* read
  }

  override async *streamBatches(_request: AdapterRequest): AsyncIterable<readonly StreamChunk[]> {
    const reads = this.attempts.shift()
    if (!reads) throw new Error('the adapter ran out of scripted attempts')
    for (const read of reads) yield read
  }
}

const instant = { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

async function runtime(adapter: LlmAdapter) {
  const root = new Context()
  await root.plugin(LlmRuntime, instant)
  root.llm.registerAdapter('p', adapter)
  return root
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], ...overrides }
}

async function batches(stream: AsyncIterable<readonly StreamChunk[]>) {
  const out: (readonly StreamChunk[])[] = []
  for await (const batch of stream) out.push(batch)
  return out
}

const [start, delta, end, usage, finish] = say('hello') as [StreamChunk, StreamChunk, StreamChunk, StreamChunk, StreamChunk]
const more: StreamChunk = { type: 'text-delta', index: 0, text: ' again' }
const broken: StreamChunk = { type: 'finish', reason: 'error', failure: { code: 'TRANSPORT', message: 'the connection dropped' } }

describe('streamBatches: the chunks of one read together', () => {
  it('keeps an adapter\'s reads whole, with the finish alone after them, and stream gives the same chunks in order', async () => {
    const reads = [[start, delta], [more, end, usage, finish]]
    const root = await runtime(new ReadsAdapter([reads, reads]))
    expect(await batches(root.llm.streamBatches(request()))).toEqual([[start, delta], [more, end, usage], [finish]])
    const flat: StreamChunk[] = []
    for await (const chunk of root.llm.stream(request())) flat.push(chunk)
    expect(flat).toEqual([start, delta, more, end, usage, finish])
  })

  it('gives each chunk of an adapter that has only stream as a batch of its own, held chunks joining the first delta', async () => {
    const root = await runtime(new FakeAdapter([{ chunks: say('hello') }]))
    expect(await batches(root.llm.streamBatches(request()))).toEqual([[start, delta], [end], [usage], [finish]])
  })

  it('reports the attempt once the caller has every chunk before the finish, and before the finish', async () => {
    const root = await runtime(new ReadsAdapter([[[start, delta, end, usage, finish]]]))
    const seen: string[] = []
    const stream = root.llm.streamBatches(request({ onEvent: (event) => { if (event.type === 'attempt') seen.push('attempt') } }))
    for await (const batch of stream) for (const chunk of batch) seen.push(chunk.type)
    expect(seen).toEqual(['block-start', 'text-delta', 'block-end', 'usage', 'attempt', 'finish'])
  })

  it('shows what a read held before a failure in it, and ends with the failure instead of retrying', async () => {
    const root = await runtime(new ReadsAdapter([[[start, delta, broken]], [[start, delta, end, usage, finish]]]))
    expect(await batches(root.llm.streamBatches(request()))).toEqual([[start, delta], [broken]])
  })

  it('skips an empty read', async () => {
    const root = await runtime(new ReadsAdapter([[[start, delta], [], [end, usage, finish]]]))
    expect(await batches(root.llm.streamBatches(request()))).toEqual([[start, delta], [end, usage], [finish]])
  })

  it('gives stream no chunk of a read after the caller aborted, and ends it aborted', async () => {
    const root = await runtime(new ReadsAdapter([[[start, delta, more, more], [end, usage, finish]]]))
    const controller = new AbortController()
    const seen: StreamChunk[] = []
    for await (const chunk of root.llm.stream(request({ signal: controller.signal }))) {
      seen.push(chunk)
      if (chunk.type === 'text-delta') controller.abort()
    }
    expect(seen.map((chunk) => chunk.type)).toEqual(['block-start', 'text-delta', 'finish'])
    expect(seen.at(-1)).toMatchObject({ reason: 'aborted', failure: { code: 'ABORTED' } })
  })

  it('ends aborted, not with the model\'s finish, when the caller aborts while taking the read that holds it', async () => {
    const root = await runtime(new ReadsAdapter([[[start, delta, end, usage, finish]]]))
    const controller = new AbortController()
    const attempts: string[] = []
    const got: (readonly StreamChunk[])[] = []
    const stream = root.llm.streamBatches(request({ signal: controller.signal, onEvent: (event) => { if (event.type === 'attempt') attempts.push(event.type) } }))
    for await (const batch of stream) {
      got.push(batch)
      controller.abort()
    }
    expect(got).toEqual([[start, delta, end, usage], [expect.objectContaining({ type: 'finish', reason: 'aborted' })]])
    expect(attempts).toHaveLength(1)
  })

  it('closes the adapter\'s reads when the caller stops in the middle of one', async () => {
    let closed = false
    const adapter = new ReadsAdapter([])
    adapter.streamBatches = async function* () {
      try {
        yield [start, delta, more]
        yield [end, usage, finish]
      } finally {
        closed = true
      }
    }
    const root = await runtime(adapter)
    for await (const chunk of root.llm.stream(request())) if (chunk.type === 'text-delta') break
    expect(closed).toBe(true)
  })

  it('retries a read that failed before showing anything, dropping what it held', async () => {
    const root = await runtime(new ReadsAdapter([[[start, broken]], [[start, delta, end, usage, finish]]]))
    expect(await batches(root.llm.streamBatches(request()))).toEqual([[start, delta, end, usage], [finish]])
  })
})
