import { Context } from '@deepseek-ai/cordis'
import { LlmError, LlmRuntime, userMessage, type AdapterRequest, type LlmEvent, type StreamChunk } from '@rein/llm'
import { describe, expect, it } from 'vitest'
import { createScriptedLlm } from '../src/index.ts'

function request(overrides: Partial<AdapterRequest> = {}): AdapterRequest {
  return { provider: 'scripted', model: 'm', messages: [userMessage('hi', 'u1')], signal: new AbortController().signal, ...overrides }
}

async function collect(stream: AsyncIterable<StreamChunk>) {
  const chunks: StreamChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}

/** The chunks seen before the stream threw, and what it threw. */
async function collectUntilThrow(stream: AsyncIterable<StreamChunk>) {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of stream) chunks.push(chunk)
  } catch (error) {
    return { chunks, error }
  }
  return { chunks, error: undefined }
}

async function runtime() {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 1, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  return root
}

describe('createScriptedLlm chunks', () => {
  it('frames consecutive text steps as one block, then usage, then finish stop', async () => {
    const llm = createScriptedLlm([[{ text: 'Hello' }, { usage: { inputTokens: 3, outputTokens: 2 } }, { text: ' world' }]])
    expect(await collect(llm.stream(request()))).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: ' world' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello world' } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2 } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('numbers reasoning, text and tool-call blocks in order and finishes with tool-calls', async () => {
    const llm = createScriptedLlm([[
      { reasoning: 'The user wants' },
      { reasoning: ' the README.' },
      { text: 'Reading it.' },
      { toolCall: { id: 'call_a', name: 'read_file', arguments: ['{"path":', '"README.md"}'] } },
      { toolCall: { name: 'list_dir', arguments: '{}' } },
    ]])
    expect(await collect(llm.stream(request()))).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'The user wants' },
      { type: 'reasoning-delta', index: 0, text: ' the README.' },
      { type: 'block-end', index: 0, block: { type: 'reasoning', text: 'The user wants the README.' } },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'Reading it.' },
      { type: 'block-end', index: 1, block: { type: 'text', text: 'Reading it.' } },
      { type: 'block-start', index: 2, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 2, id: 'call_a', name: 'read_file', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 2, id: 'call_a', argumentsDelta: '"README.md"}' },
      { type: 'block-end', index: 2, block: { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"README.md"}' } },
      { type: 'block-start', index: 3, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 3, id: 'call_0_1', name: 'list_dir', argumentsDelta: '{}' },
      { type: 'block-end', index: 3, block: { type: 'tool-call', id: 'call_0_1', name: 'list_dir', arguments: '{}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('starts a new text block after a tool call', async () => {
    const llm = createScriptedLlm([[{ text: 'a' }, { toolCall: { id: 't', name: 'x', arguments: '' } }, { text: 'b' }]])
    const chunks = await collect(llm.stream(request()))
    expect(chunks.filter((chunk) => chunk.type === 'block-end')).toEqual([
      { type: 'block-end', index: 0, block: { type: 'text', text: 'a' } },
      { type: 'block-end', index: 1, block: { type: 'tool-call', id: 't', name: 'x', arguments: '' } },
      { type: 'block-end', index: 2, block: { type: 'text', text: 'b' } },
    ])
  })

  it('uses the finish and failure a turn names', async () => {
    const failure = { code: 'SERVER' as const, message: 'cut off' }
    const llm = createScriptedLlm([
      { steps: [{ text: 'long' }, { toolCall: { id: 't', name: 'x', arguments: '{"a":' } }], finish: 'max-tokens' },
      { steps: [], finish: 'error', failure },
    ])
    expect((await collect(llm.stream(request()))).at(-1)).toEqual({ type: 'finish', reason: 'max-tokens' })
    expect(await collect(llm.stream(request()))).toEqual([{ type: 'finish', reason: 'error', failure }])
  })

  it('finishes an empty turn with stop and nothing else', async () => {
    const llm = createScriptedLlm([[]])
    expect(await collect(llm.stream(request()))).toEqual([{ type: 'finish', reason: 'stop' }])
  })

  it('throws an LlmError at a fail step, after the chunks before it and leaving its block open', async () => {
    const llm = createScriptedLlm([[{ text: 'Hel' }, { fail: { code: 'STREAM_CLOSED', message: 'socket closed', status: 200 } }, { text: 'lo' }]])
    const { chunks, error } = await collectUntilThrow(llm.stream(request()))
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hel' },
    ])
    expect(error).toBeInstanceOf(LlmError)
    expect((error as LlmError).failure).toEqual({ code: 'STREAM_CLOSED', message: 'socket closed', status: 200 })
  })

  it('throws ABORTED instead of the next chunk once the request signal aborts', async () => {
    const controller = new AbortController()
    const llm = createScriptedLlm([[{ text: 'a' }, { text: 'b' }]])
    const chunks: StreamChunk[] = []
    const run = async () => {
      for await (const chunk of llm.stream(request({ signal: controller.signal }))) {
        chunks.push(chunk)
        if (chunk.type === 'text-delta') controller.abort()
      }
    }
    await expect(run()).rejects.toMatchObject({ code: 'ABORTED' })
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'a' },
    ])
  })
})

describe('createScriptedLlm script', () => {
  it('records every request, including one past the end of the script', async () => {
    const llm = createScriptedLlm([[{ text: 'one' }]])
    const first = request({ system: 'be brief' })
    const second = request({ model: 'other' })
    await collect(llm.stream(first))
    await expect(collect(llm.stream(second))).rejects.toMatchObject({ code: 'INVALID_REQUEST' })
    expect(llm.requests).toEqual([first, second])
  })

  it('throws INVALID_REQUEST naming the call count once the script is exhausted', async () => {
    const llm = createScriptedLlm([[{ text: 'one' }], [{ text: 'two' }]])
    await collect(llm.stream(request()))
    await collect(llm.stream(request()))
    const { chunks, error } = await collectUntilThrow(llm.stream(request()))
    expect(chunks).toEqual([])
    expect(error).toBeInstanceOf(LlmError)
    expect((error as LlmError).failure).toEqual({ code: 'INVALID_REQUEST', message: 'the scripted LLM\'s script is exhausted after 2 calls; call #3 has no turn' })
  })

  it('asks a script function for each turn with the request and its call index', async () => {
    const seen: [string, number][] = []
    const llm = createScriptedLlm((received, index) => {
      seen.push([received.model, index])
      return [{ text: `turn ${index}` }]
    })
    const texts: string[] = []
    for (const model of ['a', 'b']) {
      const chunks = await collect(llm.stream(request({ model })))
      texts.push(...chunks.flatMap((chunk) => chunk.type === 'text-delta' ? [chunk.text] : []))
    }
    expect(seen).toEqual([['a', 0], ['b', 1]])
    expect(texts).toEqual(['turn 0', 'turn 1'])
  })

  it('rethrows what a script function throws when the stream is read', async () => {
    const llm = createScriptedLlm(() => {
      throw new Error('no turn for this')
    })
    const stream = llm.stream(request())
    expect(llm.requests).toHaveLength(1)
    await expect(collect(stream)).rejects.toThrow('no turn for this')
  })

  it('numbers default tool-call ids by call index and position', async () => {
    const llm = createScriptedLlm([[{ toolCall: { name: 'x', arguments: '{}' } }], [{ toolCall: { name: 'x', arguments: '{}' } }, { toolCall: { name: 'y', arguments: '{}' } }]])
    const ids: string[] = []
    for (let call = 0; call < 2; call++) {
      for (const chunk of await collect(llm.stream(request()))) if (chunk.type === 'block-end' && chunk.block.type === 'tool-call') ids.push(chunk.block.id)
    }
    expect(ids).toEqual(['call_0_0', 'call_1_0', 'call_1_1'])
  })

  it('answers resolveModel by model id and listModels with the models option', () => {
    const models = [{ id: 'small', maxTokens: 100 }, { id: 'large', contextWindow: 1000 }]
    const llm = createScriptedLlm([], { models })
    expect(llm.resolveModel('any', 'large')).toEqual({ id: 'large', contextWindow: 1000 })
    expect(llm.resolveModel('any', 'missing')).toBe(undefined)
    expect(llm.listModels()).toEqual(models)
    expect(createScriptedLlm([]).listModels()).toEqual([])
  })
})

describe('createScriptedLlm behind LlmRuntime', () => {
  it('streams a scripted turn through ctx.llm unchanged', async () => {
    const root = await runtime()
    const llm = createScriptedLlm([[{ text: 'hi there' }, { usage: { inputTokens: 5, outputTokens: 2 } }]])
    root.llm.registerAdapter('scripted', llm)
    expect(await collect(root.llm.stream({ provider: 'scripted', model: 'm', messages: [userMessage('hi', 'u1')] }))).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'hi there' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'hi there' } },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 2 } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('is retried by the runtime after a scripted rate limit, and sees both attempts', async () => {
    const root = await runtime()
    const llm = createScriptedLlm([
      [{ fail: { code: 'RATE_LIMIT', message: 'slow down', status: 429 } }],
      [{ toolCall: { id: 'c1', name: 'read_file', arguments: '{"path":"a"}' } }],
    ])
    root.llm.registerAdapter('scripted', llm)
    const events: LlmEvent[] = []
    const chunks = await collect(root.llm.stream({
      provider: 'scripted', model: 'm', messages: [userMessage('read a', 'u1')], onEvent: (event) => events.push(event),
    }))
    expect(chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'read_file', argumentsDelta: '{"path":"a"}' },
      { type: 'block-end', index: 0, block: { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(events.filter((event) => !event.type.startsWith('attempt'))).toEqual([{
      type: 'retry', provider: 'scripted', model: 'm', attempt: 1, delayMs: 0, failure: { code: 'RATE_LIMIT', message: 'slow down', status: 429 },
    }])
    expect(llm.requests).toHaveLength(2)
    expect(llm.requests.map((received) => received.messages)).toEqual([[userMessage('read a', 'u1')], [userMessage('read a', 'u1')]])
  })

  it('ends the runtime stream with the failure once the retries are used up', async () => {
    const root = await runtime()
    const failure = { code: 'SERVER' as const, message: 'boom', status: 500 }
    const llm = createScriptedLlm([[{ fail: failure }], [{ fail: failure }], [{ text: 'never' }]])
    root.llm.registerAdapter('scripted', llm)
    expect(await collect(root.llm.stream({ provider: 'scripted', model: 'm', messages: [userMessage('hi', 'u1')] }))).toEqual([
      { type: 'finish', reason: 'error', failure },
    ])
    expect(llm.requests).toHaveLength(2)
  })

  it('ends with the exhausted-script failure, not retried, when the test scripted too few turns', async () => {
    const root = await runtime()
    root.llm.registerAdapter('scripted', createScriptedLlm([]))
    expect(await collect(root.llm.stream({ provider: 'scripted', model: 'm', messages: [userMessage('hi', 'u1')] }))).toEqual([{
      type: 'finish', reason: 'error', failure: { code: 'INVALID_REQUEST', message: 'the scripted LLM\'s script is exhausted after 0 calls; call #1 has no turn' },
    }])
  })

  it('feeds its models to the runtime, which applies their defaults to the request', async () => {
    const root = await runtime()
    const llm = createScriptedLlm([[{ text: 'ok' }]], { models: [{ id: 'm', maxTokens: 64, reasoning: { efforts: ['low', 'high'], default: 'low' } }] })
    root.llm.registerAdapter('scripted', llm)
    await collect(root.llm.stream({ provider: 'scripted', model: 'm', messages: [userMessage('hi', 'u1')] }))
    expect(root.llm.listModels('scripted')).toEqual([{ id: 'm', maxTokens: 64, reasoning: { efforts: ['low', 'high'], default: 'low' } }])
    expect(llm.requests[0]).toMatchObject({ maxTokens: 64, reasoningEffort: 'low' })
  })
})
