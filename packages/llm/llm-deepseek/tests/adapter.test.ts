// DeepSeek over real HTTP against the testkit's mock server in its DeepSeek dialect, through a real LlmRuntime.
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { BlockAssembler, assistantMessage, toolResultMessage, userMessage, type LlmAttempt, type LlmRequest, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockScript, type MockServer, type MockStep } from '@rein/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as deepseek from '../src/index.ts'

let server: MockServer | undefined
beforeEach(() => {
  process.env.REIN_TEST_DEEPSEEK_KEY = 'sk-deepseek-test-0123456789'
})
afterEach(async () => {
  await server?.close()
  server = undefined
  delete process.env.REIN_TEST_DEEPSEEK_KEY
})

async function boot(script: MockScript, config: Partial<deepseek.Config> = {}) {
  server = await startMockOpenAiServer(script)
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  // The mock stands in for api.deepseek.com, so it is named as DeepSeek would be (its host otherwise).
  await root.plugin(deepseek, { baseURL: server.url, label: 'DeepSeek', apiKeyEnv: 'REIN_TEST_DEEPSEEK_KEY', ...config })
  return { root, server }
}

async function run(root: Context, request: Partial<LlmRequest> = {}) {
  const assembler = new BlockAssembler()
  const chunks: StreamChunk[] = []
  for await (const chunk of root.llm.stream({ provider: 'deepseek', model: 'deepseek-v4-pro', messages: [userMessage('Read the README', 'u1')], ...request })) {
    chunks.push(chunk)
    assembler.push(chunk)
  }
  return { chunks, blocks: assembler.blocks(), usage: assembler.usage, finish: chunks.at(-1) as Extract<StreamChunk, { type: 'finish' }> }
}

const thinkingTurn: MockScript = [{
  dialect: 'deepseek',
  steps: [
    { keepAlive: true }, { keepAlive: true },
    { reasoning: 'The user wants' }, { reasoning: ' the README.' },
    { toolCall: { id: 'call_00_abc', name: 'read_file', arguments: ['{"path":', '"README.md"}'] } },
  ],
  usage: { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240, prompt_tokens_details: { cached_tokens: 1024 }, completion_tokens_details: { reasoning_tokens: 12 }, prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 176 },
}]

describe('DeepSeek over HTTP', () => {
  it('streams reasoning and a tool call, and counts cache hits as cache reads', async () => {
    const { root, server } = await boot(thinkingTurn)
    const { blocks, usage, finish } = await run(root)
    expect(blocks).toEqual([
      { type: 'reasoning', text: 'The user wants the README.' },
      { type: 'tool-call', id: 'call_00_abc', name: 'read_file', arguments: '{"path":"README.md"}' },
    ])
    expect(usage).toEqual({ inputTokens: 176, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 })
    expect(finish).toEqual({ type: 'finish', reason: 'tool-calls', replayState: { dialect: 'deepseek' }, responseId: 'chatcmpl-mock', responseModel: 'deepseek-v4-pro' })
    expect(server.requests[0]!.path).toBe('/v1/chat/completions')
    expect(server.requests[0]!.body).toMatchObject({ model: 'deepseek-v4-pro', thinking: { type: 'enabled' }, reasoning_effort: 'high' })
  })

  it('sends the reasoning back with the tool-call turn on the next request', async () => {
    const { root, server } = await boot([{ dialect: 'deepseek', steps: [{ text: 'It is a readme.' }] }])
    const source = { kind: 'model', provider: 'deepseek', model: 'deepseek-v4-pro', replayState: { dialect: 'deepseek' } } as const
    await run(root, {
      messages: [
        userMessage('Read the README', 'u1'),
        assistantMessage([{ type: 'reasoning', text: 'The user wants the README.' }, { type: 'tool-call', id: 'call_00_abc', name: 'read_file', arguments: '{"path":"README.md"}' }], source, 'a1'),
        toolResultMessage([{ toolCallId: 'call_00_abc', content: [{ type: 'text', text: '# rein' }] }], 't1'),
      ],
    })
    expect((server.requests[0]!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: 'Read the README' },
      {
        role: 'assistant', content: null, reasoning_content: 'The user wants the README.',
        tool_calls: [{ id: 'call_00_abc', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_00_abc', content: '# rein' },
    ])
  })

  it('retries a stream cut after long reasoning, and keeps only the answering attempt\'s reasoning to send back', async () => {
    const cut: MockScript = [{ dialect: 'deepseek', steps: [{ keepAlive: true }, { reasoning: 'The user wants' }, { reasoning: ' something; let me' }, { disconnect: true }] }, ...thinkingTurn]
    const { root, server } = await boot(cut)
    const { chunks, blocks, usage, finish } = await run(root)
    expect(server.requests).toHaveLength(2)
    // The retry is the same request again: nothing of the failed attempt went into it.
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body)
    expect(chunks.filter((chunk) => chunk.type === 'reasoning-delta' || chunk.type === 'discard').map((chunk) => chunk.type === 'reasoning-delta' ? chunk.text : chunk.type)).toEqual([
      'The user wants', ' something; let me', 'discard', 'The user wants', ' the README.',
    ])
    expect(blocks).toEqual([
      { type: 'reasoning', text: 'The user wants the README.' },
      { type: 'tool-call', id: 'call_00_abc', name: 'read_file', arguments: '{"path":"README.md"}' },
    ])
    expect(usage).toEqual({ inputTokens: 176, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 })
    expect(finish).toMatchObject({ reason: 'tool-calls', replayState: { dialect: 'deepseek' } })
  })

  it('turns thinking off for effort off, and refuses an effort the model does not list', async () => {
    const { root, server } = await boot([{ dialect: 'deepseek', steps: [{ text: 'quick' }] }])
    await run(root, { reasoningEffort: 'off' })
    expect(server.requests[0]!.body).toMatchObject({ thinking: { type: 'disabled' } })
    expect(server.requests[0]!.body).not.toHaveProperty('reasoning_effort')
    expect((await run(root, { reasoningEffort: 'medium' })).finish.failure).toEqual({
      code: 'UNSUPPORTED_REASONING_EFFORT',
      message: 'deepseek/deepseek-v4-pro does not support reasoning effort "medium"; it supports off, low, high, max',
    })
    expect(server.requests).toHaveLength(1)
  })

  it('treats 402 as QUOTA, not retried, and finds context overflow by its message', async () => {
    const { root, server } = await boot([
      { kind: 'error', status: 402, message: 'Insufficient Balance', type: 'unknown_error' },
      { kind: 'error', status: 400, type: 'invalid_request_error', code: 'invalid_request_error', message: "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion)." },
    ])
    expect((await run(root)).finish.failure).toMatchObject({ code: 'QUOTA', status: 402, message: 'DeepSeek returned HTTP 402: Insufficient Balance' })
    expect((await run(root)).finish.failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(server.requests).toHaveLength(2)
  })

  it('adds config models to the built-in catalog, replacing by id', async () => {
    const { root } = await boot([], { models: [{ id: 'deepseek-chat', contextWindow: 64_000, pricing: { input: 1, output: 2 } }, { id: 'my-finetune', contextWindow: 8_000 }] })
    expect(root.llm.listModels('deepseek').map((model) => [model.id, model.contextWindow])).toEqual([
      ['deepseek-v4-pro', 1_000_000], ['deepseek-v4-flash', 1_000_000], ['deepseek-reasoner', 131_072], ['deepseek-chat', 64_000], ['my-finetune', 8_000],
    ])
    expect(root.llm.costOf('deepseek', 'deepseek-chat', { inputTokens: 2_000_000, outputTokens: 0 })).toBe(2)
  })

  it('names DEEPSEEK_API_KEY when the key is missing', async () => {
    server = await startMockOpenAiServer([])
    const root = new Context()
    await root.plugin(LlmRuntime)
    const saved = process.env.DEEPSEEK_API_KEY
    delete process.env.DEEPSEEK_API_KEY
    try {
      const fiber = await root.plugin(deepseek, { baseURL: server.url })
      expect((await run(root)).finish.failure?.message).toContain('set the environment variable DEEPSEEK_API_KEY')
      await fiber.dispose()
      expect(root.llm.providers()).toEqual([])
    } finally {
      if (saved !== undefined) process.env.DEEPSEEK_API_KEY = saved
    }
    expect(server.requests).toHaveLength(0)
  })
})

/** A DeepSeek text chunk carrying the usage so far, with its cache-hit counts. */
function textWithUsage(content: string, completion: number): MockStep {
  const usage = { prompt_tokens: 1200, completion_tokens: completion, prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 176 }
  return { event: { id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'deepseek-v4-flash', choices: [{ index: 0, delta: { content, reasoning_content: null }, finish_reason: null }], usage } }
}

// The audit's repro-abort-usage on DeepSeek's wire: usage a relay reported mid-stream was dropped
// for an estimate when the caller cancelled after it.
describe('a DeepSeek stream cancelled after usage was reported', () => {
  it('charges the last usage reported, not an estimate nor a sum', async () => {
    const { root } = await boot([{ dialect: 'deepseek', steps: [textWithUsage('Hello', 1), textWithUsage(' there', 2), { stall: true }] }])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    const controller = new AbortController()
    for await (const chunk of root.llm.stream({ provider: 'deepseek', model: 'deepseek-v4-flash', messages: [userMessage('hi', 'u1')], signal: controller.signal })) {
      if (chunk.type === 'text-delta' && chunk.text === ' there') controller.abort()
    }
    expect(attempts.map((attempt) => [attempt.finishReason, attempt.usage, attempt.usageEstimated])).toEqual([
      ['aborted', { inputTokens: 176, outputTokens: 2, cacheReadTokens: 1024 }, undefined],
    ])
  })
})
