// Every provider attempt is reported once, when it ends, with everything known about it: the
// session log and cost accounting are built from these records.
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { LlmRuntime, userMessage, type LlmAttempt, type LlmEvent, type LlmFailure, type LlmRequest, type StreamChunk } from '../src/index.ts'
import { FakeAdapter, say } from './fake-adapter.ts'

const instant = { retry: { maxRetries: 5, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

async function runtime() {
  const root = new Context()
  await root.plugin(LlmRuntime, instant)
  return root
}

function request(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { provider: 'p', model: 'm', messages: [userMessage('hi', 'u1')], ...overrides }
}

async function collect(root: Context, overrides: Partial<LlmRequest> = {}) {
  const events: LlmEvent[] = []
  const chunks: StreamChunk[] = []
  for await (const chunk of root.llm.stream(request({ onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) }, ...overrides }))) chunks.push(chunk)
  return { chunks, events }
}

const attempts = (events: LlmEvent[]) => events.filter((event): event is Extract<LlmEvent, { type: 'attempt' }> => event.type === 'attempt')
const usage = (inputTokens: number, outputTokens: number): StreamChunk => ({ type: 'usage', usage: { inputTokens, outputTokens } })
const textDelta = (text: string): StreamChunk[] => [{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text }]

/** A text answer whose usage chunk carries `reported`, whatever it is. */
const reporting = (reported: unknown): StreamChunk[] => say('ok').map((chunk) => (chunk.type === 'usage' ? { type: 'usage', usage: reported } as StreamChunk : chunk))

describe('attempt records', () => {
  it('reports every retried attempt, before its retry event, with the usage the provider reported', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([
      { chunks: [usage(40, 0)], throws: { code: 'SERVER', message: 'boom', status: 500 } },
      { chunks: say('ok') },
    ]))
    const { events } = await collect(root, { temperature: 0.3 })
    expect(events.map((event) => event.type)).toEqual(['attempt', 'retry', 'attempt'])
    const [failed, succeeded] = attempts(events)
    expect(failed).toEqual({
      type: 'attempt', provider: 'p', model: 'm', retry: 0, fallback: 0, startedAt: expect.any(Number), endedAt: expect.any(Number),
      shown: false, failure: { code: 'SERVER', message: 'boom', status: 500 }, finishReason: 'error', usage: { inputTokens: 40, outputTokens: 0 }, temperature: 0.3,
    })
    expect(succeeded).toEqual({
      type: 'attempt', provider: 'p', model: 'm', retry: 1, fallback: 0, startedAt: expect.any(Number), endedAt: expect.any(Number),
      shown: true, finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 1 }, temperature: 0.3,
    })
    expect(succeeded!.endedAt).toBeGreaterThanOrEqual(succeeded!.startedAt)
  })

  it('keeps only usage that is usage: a count that is negative, not a number or missing is no report (the attempt is estimated); a fraction is rounded; reasoning above output was left out of it', async () => {
    const bad: unknown[] = [{ inputTokens: -5, outputTokens: 2 }, {}, null, { inputTokens: 3, outputTokens: Number.NaN }, { inputTokens: '3', outputTokens: 1 }, { inputTokens: 3, outputTokens: 1, cacheReadTokens: -1 }, 'lots']
    for (const reported of bad) {
      const root = await runtime()
      root.llm.registerAdapter('p', new FakeAdapter([{ chunks: reporting(reported) }]))
      const [attempt] = attempts((await collect(root)).events)
      expect(attempt).toMatchObject({ usageEstimated: true, usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) } })
    }
    const kept = async (reported: object) => {
      const root = await runtime()
      root.llm.registerAdapter('p', new FakeAdapter([{ chunks: reporting(reported) }]))
      const [attempt] = attempts((await collect(root)).events)
      expect(attempt?.usageEstimated).toBeUndefined()
      return attempt?.usage
    }
    expect(await kept({ inputTokens: 10.4, outputTokens: 2.6, cacheReadTokens: 1 })).toEqual({ inputTokens: 10, outputTokens: 3, cacheReadTokens: 1 })
    expect(await kept({ inputTokens: 10, outputTokens: 2, reasoningTokens: 5 })).toEqual({ inputTokens: 10, outputTokens: 7, reasoningTokens: 5 })
    expect(await kept({ inputTokens: 10, outputTokens: 2, cacheReadTokens: null })).toEqual({ inputTokens: 10, outputTokens: 2 })
    // A later report that is no usage takes nothing back.
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...reporting({ inputTokens: 4, outputTokens: 1 }).slice(0, -1), { type: 'usage', usage: { inputTokens: -1, outputTokens: 0 } }, { type: 'finish', reason: 'stop' }] }]))
    expect(attempts((await collect(root)).events)[0]).toMatchObject({ usage: { inputTokens: 4, outputTokens: 1 } })
  })

  it('reports attempts down the fallback chain with their chain position, each before its fallback event', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ throws: { code: 'QUOTA', message: 'no money' } }]))
    root.llm.registerAdapter('b', new FakeAdapter([{ chunks: say('from b') }]))
    const { events } = await collect(root, { fallbacks: [{ provider: 'b', model: 'mb' }] })
    expect(events.map((event) => event.type === 'attempt' ? `attempt ${event.provider} #${event.fallback} ${event.failure?.code ?? 'ok'}` : event.type)).toEqual([
      'attempt p #0 QUOTA', 'fallback', 'attempt b #1 ok',
    ])
  })

  it('reports an attempt aborted mid-stream, with usage estimated from what it showed', async () => {
    const root = await runtime()
    const controller = new AbortController()
    root.llm.registerAdapter('p', {
      async *stream() {
        yield* textDelta('x'.repeat(40))
        await new Promise(() => {})
      },
    })
    const events: LlmEvent[] = []
    const system = 's'.repeat(100)
    for await (const chunk of root.llm.stream(request({ system, signal: controller.signal, onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) {
      if (chunk.type === 'text-delta') controller.abort()
    }
    // The text the model reads, four characters a token: the system text, and 4 tokens of framing with 'hi'.
    const input = Math.ceil(system.length / 4) + 4 + Math.ceil('hi'.length / 4)
    expect(attempts(events)).toEqual([expect.objectContaining({
      shown: true, finishReason: 'aborted', failure: { code: 'ABORTED', message: 'the request was cancelled' },
      usage: { inputTokens: input, outputTokens: 10 }, usageEstimated: true,
    })])
  })

  it('reports an attempt aborted after usage chunks with the last usage reported, not an estimate nor a sum', async () => {
    const root = await runtime()
    const controller = new AbortController()
    root.llm.registerAdapter('p', {
      async *stream() {
        // Cumulative reports mid-stream (a server's continuous usage stats), then the adapter hangs.
        yield* [...textDelta('x'.repeat(40)), usage(700, 10), { type: 'text-delta', index: 0, text: 'y' }, usage(700, 70), { type: 'text-delta', index: 0, text: 'z' }] satisfies StreamChunk[]
        await new Promise(() => {})
      },
    })
    const events: LlmEvent[] = []
    for await (const chunk of root.llm.stream(request({ signal: controller.signal, onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) {
      if (chunk.type === 'text-delta' && chunk.text === 'z') controller.abort()
    }
    // The last report, plus the one character of output that came after it (estimated, as output no report counted).
    expect(attempts(events)).toEqual([expect.objectContaining({ finishReason: 'aborted', usage: { inputTokens: 700, outputTokens: 71 }, usageEstimated: true })])
  })

  it('adds an estimate of the output after a stale early report to an attempt cut off, not charging that report\'s 0 output', async () => {
    const root = await runtime()
    const controller = new AbortController()
    root.llm.registerAdapter('p', {
      async *stream() {
        // A relay that reports the prompt at the start and the rest only at the end, which never comes.
        yield* [usage(700, 0), ...textDelta('x'.repeat(400)), { type: 'text-delta', index: 0, text: 'stop' }] satisfies StreamChunk[]
        await new Promise(() => {})
      },
    })
    const events: LlmEvent[] = []
    for await (const chunk of root.llm.stream(request({ signal: controller.signal, onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) {
      if (chunk.type === 'text-delta' && chunk.text === 'stop') controller.abort()
    }
    expect(attempts(events)).toEqual([expect.objectContaining({ finishReason: 'aborted', usage: { inputTokens: 700, outputTokens: 101 }, usageEstimated: true })])
  })

  it('keeps the provider\'s report apart from the estimate added to it, so usage counters can take only what was reported', async () => {
    const root = await runtime()
    const controller = new AbortController()
    root.llm.registerAdapter('p', {
      async *stream() {
        yield* [usage(700, 3), ...textDelta('x'.repeat(400)), { type: 'text-delta', index: 0, text: 'stop' }] satisfies StreamChunk[]
        await new Promise(() => {})
      },
    })
    const events: LlmEvent[] = []
    for await (const chunk of root.llm.stream(request({ signal: controller.signal, onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) {
      if (chunk.type === 'text-delta' && chunk.text === 'stop') controller.abort()
    }
    expect(attempts(events)).toEqual([expect.objectContaining({ usage: { inputTokens: 700, outputTokens: 104 }, usageEstimated: true, reportedUsage: { inputTokens: 700, outputTokens: 3 } })])
  })

  it('has no reported part when the provider reported nothing, nor when nothing was added to its report', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([
      { chunks: [...textDelta('12345678'), { type: 'block-end', index: 0, block: { type: 'text', text: '12345678' } }, { type: 'finish', reason: 'stop' }] },
    ]))
    const { events } = await collect(root)
    expect(attempts(events)[0]).toMatchObject({ usageEstimated: true })
    expect(attempts(events)[0]).not.toHaveProperty('reportedUsage')
    const again = await runtime()
    again.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('ok') }]))
    const { events: plain } = await collect(again)
    expect(attempts(plain)[0]).not.toHaveProperty('usageEstimated')
    expect(attempts(plain)[0]).not.toHaveProperty('reportedUsage')
  })

  it('adds an estimate of the output after a stale early report to an attempt that finished without a later one', async () => {
    const root = await runtime()
    const text = 'x'.repeat(400)
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [usage(700, 0), ...textDelta(text), { type: 'block-end', index: 0, block: { type: 'text', text } }, { type: 'finish', reason: 'stop' }] }]))
    const { events } = await collect(root)
    expect(attempts(events)).toEqual([expect.objectContaining({ finishReason: 'stop', usage: { inputTokens: 700, outputTokens: 100 }, usageEstimated: true })])
  })

  it('keeps the usage of an attempt that failed in the stream after its usage chunk', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...textDelta('Hal'), usage(500, 7)], throws: { code: 'STREAM_CLOSED', message: 'dropped' } }]))
    const { chunks, events } = await collect(root)
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'STREAM_CLOSED' } })
    expect(attempts(events)).toEqual([expect.objectContaining({ shown: true, finishReason: 'error', usage: { inputTokens: 500, outputTokens: 7 }, failure: { code: 'STREAM_CLOSED', message: 'dropped' } })])
    expect(attempts(events)[0]).not.toHaveProperty('usageEstimated')
  })

  it('estimates the usage of a successful answer the provider did not count', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...textDelta('12345678'), { type: 'block-end', index: 0, block: { type: 'text', text: '12345678' } }, { type: 'finish', reason: 'stop' }] }]))
    const { events } = await collect(root)
    expect(attempts(events)[0]).toMatchObject({ usage: { outputTokens: 2 }, usageEstimated: true, finishReason: 'stop' })
    expect(attempts(events)[0]).not.toHaveProperty('failure')
  })

  it('estimates a tool name streamed in pieces once, not once per delta that carries the name so far', async () => {
    const root = await runtime()
    const name = 'a_rather_long_tool_name_'.repeat(4)
    const grows = [24, 48, 72, 96].map((length, index) => ({ type: 'tool-call-delta' as const, index: 0, id: 'c1', ...(index === 0 ? {} : {}), name: name.slice(0, length), argumentsDelta: '' }))
    const call = { type: 'tool-call' as const, id: 'c1', name, arguments: '{}' }
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [{ type: 'block-start', index: 0, blockType: 'tool-call' }, ...grows, { type: 'tool-call-delta', index: 0, id: 'c1', argumentsDelta: '{}' }, { type: 'block-end', index: 0, block: call }, { type: 'finish', reason: 'tool-calls' }] }]))
    const { events } = await collect(root)
    // 96 characters of name and 2 of arguments: about 98 / 4, not (24 + 48 + 72 + 96 + 2) / 4.
    expect(attempts(events)[0]).toMatchObject({ usage: { outputTokens: Math.ceil(98 / 4) }, usageEstimated: true })
  })

  it('reports an attempt the consumer stopped reading', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('a long answer') }]))
    const events: LlmEvent[] = []
    for await (const chunk of root.llm.stream(request({ onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) } }))) if (chunk.type === 'text-delta') break
    expect(attempts(events)).toEqual([expect.objectContaining({ shown: true, finishReason: 'aborted', failure: { code: 'ABORTED', message: 'the caller stopped reading the stream' } })])
  })

  it('reports an attempt once when its consumer throws into the stream at the finish', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('ok') }]))
    const events: LlmEvent[] = []
    const stream = root.llm.streamBatches(request({ onEvent: (event) => { if (event.type === 'attempt') events.push(event) } }))[Symbol.asyncIterator]()
    let next = await stream.next()
    while (!next.done && !next.value.some((chunk) => chunk.type === 'finish')) next = await stream.next()
    // The finish was reported before it was handed over; a consumer that then throws ends nothing twice.
    await stream.throw(new Error('the consumer gave up')).catch(() => {})
    expect(events).toHaveLength(1)
  })

  it('records the generation options sent after catalog defaults, and the response id and model', async () => {
    const root = await runtime()
    const models = [{ id: 'm', maxTokens: 4096, reasoning: { efforts: ['low', 'high'], default: 'high' } }]
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...say('hi').slice(0, -1), { type: 'finish', reason: 'stop', responseId: 'resp-1', responseModel: 'm-2026-01-01' }] }], models))
    const { chunks, events } = await collect(root)
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'stop', responseId: 'resp-1', responseModel: 'm-2026-01-01' })
    expect(attempts(events)[0]).toMatchObject({ maxTokens: 4096, reasoningEffort: 'high', responseId: 'resp-1', responseModel: 'm-2026-01-01' })
  })

  it('emits llm/attempt with the same record, and survives a listener that throws', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: say('ok') }]))
    const seen: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { seen.push(event) })
    root.on('llm/attempt', () => { throw new Error('listener bug') })
    const { events } = await collect(root)
    expect(seen).toEqual(attempts(events))
    expect(seen).toHaveLength(1)
  })
})

describe('an adapter that yields what is no stream chunk', () => {
  const malformed: [string, unknown][] = [
    ['null', null],
    ['a string', 'hello'],
    ['a chunk of no known type', { type: 'mystery', index: 0 }],
    ['a text delta without text', { type: 'text-delta', index: 0 }],
    ['a text delta whose text is a number', { type: 'text-delta', index: 0, text: 5 }],
    ['a reasoning delta without an index', { type: 'reasoning-delta', text: 'hm' }],
    ['a tool-call delta whose arguments are an object', { type: 'tool-call-delta', index: 0, id: 'c1', argumentsDelta: { q: 1 } }],
    ['a tool-call delta without an id', { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' }],
    ['a tool-call delta whose name is a number', { type: 'tool-call-delta', index: 0, id: 'c1', name: 7, argumentsDelta: '{}' }],
    ['a block start of an unknown kind', { type: 'block-start', index: 0, blockType: 'video' }],
    ['a block end without its block', { type: 'block-end', index: 0 }],
    ['a block end whose tool call has no arguments', { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c1', name: 'f' } }],
    ['a finish of an unknown reason', { type: 'finish', reason: 'done' }],
    ['a finish whose failure is a string', { type: 'finish', reason: 'error', failure: 'boom' }],
  ]

  it.each(malformed)('ends the attempt MALFORMED_RESPONSE naming the provider, is not retried and shows nothing: %s', async (_name, chunk) => {
    const root = await runtime()
    const adapter = new FakeAdapter([{ chunks: [chunk as StreamChunk, ...say('never')] }, { chunks: say('retried') }])
    root.llm.registerAdapter('p', adapter)
    const { chunks, events } = await collect(root)
    const finish = chunks.at(-1)
    expect(finish).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'MALFORMED_RESPONSE' } })
    const message = (finish as Extract<StreamChunk, { type: 'finish' }>).failure?.message
    expect(message).toMatch(/adapter for provider "p" yielded/)
    expect(message).not.toMatch(/Cannot read|undefined \(reading/)
    expect(adapter.requests).toHaveLength(1)
    expect(chunks.filter((shown) => shown.type === 'text-delta')).toEqual([])
    expect(attempts(events)).toHaveLength(1)
    expect(attempts(events)[0]?.failure?.code).toBe('MALFORMED_RESPONSE')
  })

  it('falls back to the next route at once', async () => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [null as unknown as StreamChunk] }]))
    root.llm.registerAdapter('q', new FakeAdapter([{ chunks: say('from q') }]))
    const { chunks } = await collect(root, { fallbacks: [{ provider: 'q', model: 'm' }] })
    expect(chunks.filter((chunk) => chunk.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'from q' }])
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' })
  })
})

describe('what an adapter says of a failure or a finish, as the attempt reports it', () => {
  it('keeps of a thrown failure only the fields of an LlmFailure, each of its type: a record the log can always take', async () => {
    const root = await runtime()
    const thrown = { code: 'AUTH', message: 'key revoked', status: Number.NaN, retryAfterMs: -5, requestId: 7, modelNotFound: 'yes', raw: () => 'x', big: 10n } as unknown as LlmFailure
    root.llm.registerAdapter('p', new FakeAdapter([{ throws: thrown }]))
    const { chunks, events } = await collect(root)
    const [attempt] = attempts(events)
    expect(attempt?.failure).toEqual({ code: 'AUTH', message: 'key revoked' })
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'error', failure: { code: 'AUTH', message: expect.stringContaining('key revoked') } })
  })

  it('keeps a well-formed failure whole', async () => {
    const root = await runtime()
    const thrown: LlmFailure = { code: 'INVALID_REQUEST', message: 'no such model', status: 404, requestId: 'req-1', modelNotFound: true }
    root.llm.registerAdapter('p', new FakeAdapter([{ throws: thrown }]))
    expect(attempts((await collect(root)).events)[0]?.failure).toEqual(thrown)
  })

  it.each([
    ['a response id that is a number', { responseId: 42 }],
    ['a response model that is an object', { responseModel: { id: 'm' } }],
    ['replay state that is no JSON', { replayState: { at: () => 1 } }],
  ])('ends MALFORMED_RESPONSE for a finish with %s', async (_name, extra) => {
    const root = await runtime()
    root.llm.registerAdapter('p', new FakeAdapter([{ chunks: [...say('ok').slice(0, -1), { type: 'finish', reason: 'stop', ...extra } as unknown as StreamChunk] }]))
    const { chunks } = await collect(root)
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'MALFORMED_RESPONSE' } })
  })
})
