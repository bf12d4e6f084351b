// Found by the audit (repro-abort-usage): usage a server reported mid-stream (vLLM's continuous usage
// stats, a relay's usage on every chunk) was held until the stream ended, so a caller that cancelled
// after it (Ctrl-C) was charged rein's estimate from characters instead of the server's count.
import type { JsonValue } from '@rein/base'
import { addUsage, type LlmAttempt, type StreamChunk } from '@rein/llm'
import type { MockStep } from '@rein/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const usageChunk = (usage: JsonValue): MockStep => ({ event: { id: 'chatcmpl-u', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [], usage } })
/** A text chunk that carries cumulative usage too, as a server with continuous usage stats sends it. */
const textWithUsage = (content: string, usage: JsonValue): MockStep => ({ event: { id: 'chatcmpl-u', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta: { content }, finish_reason: null }], usage } })

/**
 * Streams until the text delta `last` arrives, then cancels: the server has sent everything before
 * it, and stalls after it. Returns the attempt records and the stream's usage chunks.
 */
async function cancelAt(steps: MockStep[], last: string) {
  const { root } = await boot([{ steps: [...steps, { stall: true }] }])
  const attempts: LlmAttempt[] = []
  root.on('llm/attempt', (event) => { attempts.push(event) })
  const controller = new AbortController()
  const { chunks, finish } = await run(root, { signal: controller.signal }, (chunk) => {
    if (chunk.type === 'text-delta' && chunk.text === last) controller.abort()
  })
  return { attempts, finish, usages: chunks.filter((chunk): chunk is Extract<StreamChunk, { type: 'usage' }> => chunk.type === 'usage').map((chunk) => chunk.usage) }
}

describe('a stream cancelled after the server reported usage', () => {
  it('charges the usage the server reported in a chunk of its own, not an estimate of it all (only the output after it is estimated)', async () => {
    const { attempts, finish } = await cancelAt([{ text: 'partial answer' }, usageChunk({ prompt_tokens: 700, completion_tokens: 70 }), { text: ' more' }], ' more')
    expect(finish).toMatchObject({ reason: 'aborted', failure: { code: 'ABORTED' } })
    expect(attempts).toHaveLength(1)
    // ' more' came after the report: 2 tokens more, at 4 characters a token.
    expect(attempts[0]).toMatchObject({ finishReason: 'aborted', usage: { inputTokens: 700, outputTokens: 72 }, usageEstimated: true })
  })

  it('charges the last of cumulative reports once, not their sum', async () => {
    const { attempts, usages } = await cancelAt([
      textWithUsage('a', { prompt_tokens: 700, completion_tokens: 1 }),
      textWithUsage('b', { prompt_tokens: 700, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 600 } }),
      textWithUsage('c', { prompt_tokens: 700, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 600 } }),
    ], 'c')
    expect(attempts.map((attempt) => [attempt.usage, attempt.usageEstimated])).toEqual([[{ inputTokens: 100, outputTokens: 3, cacheReadTokens: 600 }, undefined]])
    // The caller saw whole reports, each replacing the one before (the cancel dropped the last): none summed.
    expect(usages).toEqual([{ inputTokens: 700, outputTokens: 1 }, { inputTokens: 100, outputTokens: 2, cacheReadTokens: 600 }])
  })

  it('still charges an estimate when the server reported nothing before the cancel', async () => {
    const { attempts } = await cancelAt([{ text: 'partial answer' }, { text: ' more' }], ' more')
    expect(attempts[0]).toMatchObject({ usageEstimated: true, usage: { outputTokens: Math.ceil('partial answer more'.length / 4) } })
  })
})

describe('a stream with cumulative usage on every chunk that ends', () => {
  it('is counted once, by its last report', async () => {
    const { root } = await boot([{
      usage: null,
      steps: [
        textWithUsage('a', { prompt_tokens: 50, completion_tokens: 1 }),
        textWithUsage('b', { prompt_tokens: 50, completion_tokens: 2 }),
        { event: { id: 'chatcmpl-u', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 3 } } },
        usageChunk({ prompt_tokens: 50, completion_tokens: 3 }),
      ],
      finishReason: null,
    }])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    const { chunks, finish } = await run(root)
    expect(finish).toMatchObject({ reason: 'stop' })
    expect(attempts.map((attempt) => attempt.usage)).toEqual([{ inputTokens: 50, outputTokens: 3 }])
    const reported = chunks.flatMap((chunk) => chunk.type === 'usage' ? [chunk.usage] : [])
    expect(reported.at(-1)).toEqual({ inputTokens: 50, outputTokens: 3 })
    // Usage comes before the finish, and the finish is last.
    expect(chunks.findLastIndex((chunk) => chunk.type === 'usage')).toBeLessThan(chunks.length - 1)
    expect(attempts.reduce((sum, attempt) => addUsage(sum, attempt.usage!), { inputTokens: 0, outputTokens: 0 })).toEqual({ inputTokens: 50, outputTokens: 3 })
  })
})
