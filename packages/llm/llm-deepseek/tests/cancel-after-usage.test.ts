// The audit's repro-abort-usage on DeepSeek's wire (its transport is @rein/llm-openai's): usage a
// relay reported mid-stream was dropped for an estimate when the caller cancelled after it.
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { userMessage, type LlmAttempt } from '@rein/llm'
import { startMockOpenAiServer, type MockServer, type MockStep } from '@rein/testkit'
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

/** A DeepSeek text chunk carrying the usage so far, with its cache-hit counts. */
function textWithUsage(content: string, completion: number): MockStep {
  const usage = { prompt_tokens: 1200, completion_tokens: completion, prompt_cache_hit_tokens: 1024, prompt_cache_miss_tokens: 176 }
  return { event: { id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'deepseek-v4-flash', choices: [{ index: 0, delta: { content, reasoning_content: null }, finish_reason: null }], usage } }
}

describe('a DeepSeek stream cancelled after usage was reported', () => {
  it('charges the last usage reported, not an estimate nor a sum', async () => {
    server = await startMockOpenAiServer([{ dialect: 'deepseek', steps: [textWithUsage('Hello', 1), textWithUsage(' there', 2), { stall: true }] }])
    const root = new Context()
    await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
    await root.plugin(deepseek, { baseURL: server.url, apiKeyEnv: 'REIN_TEST_DEEPSEEK_KEY' })
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
