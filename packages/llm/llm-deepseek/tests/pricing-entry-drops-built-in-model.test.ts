// Found by the audit: the README says to get costs by adding `pricing` on a `models` entry, but an
// entry with a built-in id replaced the built-in one whole. `{id: deepseek-v4-pro, pricing}` lost
// the model's 1M context window (compaction off) and its reasoning efforts: every request with an
// effort failed UNSUPPORTED_REASONING_EFFORT, and one without sent no thinking fields at all.
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { userMessage, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockServer } from '@rein/testkit'
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

const pricing = { input: 0.5, output: 2, cacheRead: 0.1 }

async function boot(models: deepseek.Config['models']) {
  server = await startMockOpenAiServer([{ dialect: 'deepseek', steps: [{ text: 'ok' }] }, { dialect: 'deepseek', steps: [{ text: 'ok' }] }])
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(deepseek, { baseURL: server.url, label: 'DeepSeek', apiKeyEnv: 'REIN_TEST_DEEPSEEK_KEY', models })
  return { root, server }
}

async function finishOf(root: Context, reasoningEffort?: string) {
  let finish: StreamChunk | undefined
  for await (const chunk of root.llm.stream({ provider: 'deepseek', model: 'deepseek-v4-pro', messages: [userMessage('hi', 'u1')], ...(reasoningEffort ? { reasoningEffort } : {}) })) finish = chunk
  return finish
}

describe('a models entry that adds pricing to a built-in model', () => {
  it('keeps the built-in context window and reasoning efforts, and adds the prices', async () => {
    const { root } = await boot([{ id: 'deepseek-v4-pro', pricing }])
    expect(root.llm.resolveModel('deepseek', 'deepseek-v4-pro')).toEqual({
      id: 'deepseek-v4-pro', contextWindow: 1_000_000, reasoning: { efforts: ['off', 'low', 'high', 'max'], default: 'high' }, pricing,
    })
    expect(root.llm.costOf('deepseek', 'deepseek-v4-pro', { inputTokens: 176, outputTokens: 40, cacheReadTokens: 1024, reasoningTokens: 12 })).toBeCloseTo((176 * 0.5 + 1024 * 0.1 + 40 * 2) / 1e6, 12)
  })

  it('still takes the efforts the model lists, and its default when none is asked for', async () => {
    const { root, server } = await boot([{ id: 'deepseek-v4-pro', pricing }])
    expect(await finishOf(root, 'max')).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(await finishOf(root)).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(server.requests.map((request) => (request.body as { reasoning_effort?: string }).reasoning_effort)).toEqual(['max', 'high'])
  })

  it('lets the fields it gives win: a smaller window, its own efforts and default', async () => {
    const { root } = await boot([{ id: 'deepseek-v4-pro', contextWindow: 64_000, reasoningEfforts: ['off', 'high'], defaultReasoningEffort: 'off' }])
    expect(root.llm.resolveModel('deepseek', 'deepseek-v4-pro')).toEqual({ id: 'deepseek-v4-pro', contextWindow: 64_000, reasoning: { efforts: ['off', 'high'], default: 'off' } })
  })

  it('a default effort alone keeps the built-in list of efforts', async () => {
    const { root } = await boot([{ id: 'deepseek-v4-pro', defaultReasoningEffort: 'max' }])
    expect(root.llm.resolveModel('deepseek', 'deepseek-v4-pro')?.reasoning).toEqual({ efforts: ['off', 'low', 'high', 'max'], default: 'max' })
  })
})
