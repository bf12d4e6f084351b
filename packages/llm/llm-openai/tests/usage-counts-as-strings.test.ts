// Usage counts sent as strings ("prompt_tokens": "12", as some OpenAI-compatible servers and
// proxies send them) failed the whole answer as MALFORMED_RESPONSE: a good answer lost over a
// bookkeeping field. A string of plain decimal digits is that count; any other string keeps the
// behaviour of any other wrong-shaped count (MALFORMED_RESPONSE naming the field).
import { isReinError } from '@rein/base'
import type { LlmAttempt, StreamChunk } from '@rein/llm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createChunkTranslator } from '../src/index.ts'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const answer = { choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: 'stop' }] }

/** The usage chunks a stream of `answer` then a closing chunk with `usage` reports, or the failure's code. */
function usageOf(usage: Record<string, unknown>): StreamChunk[] | string {
  const translator = createChunkTranslator('Test')
  try {
    translator.push(answer)
    const chunks = translator.push({ choices: [], usage })
    translator.end(true)
    return chunks.filter((chunk) => chunk.type === 'usage')
  } catch (error) {
    return isReinError(error) ? error.code : String(error)
  }
}

const reported = (usage: Record<string, unknown>) => [{ type: 'usage', usage }]

describe('usage counts sent as strings of digits', () => {
  it('are read as those numbers: prompt and completion counts', () => {
    expect(usageOf({ prompt_tokens: '12', completion_tokens: '3', total_tokens: '15' })).toEqual(reported({ inputTokens: 12, outputTokens: 3 }))
  })

  it('are read as those numbers: OpenAI details (cached, reasoning)', () => {
    const usage = { prompt_tokens: '100', completion_tokens: '40', prompt_tokens_details: { cached_tokens: '64' }, completion_tokens_details: { reasoning_tokens: '30' } }
    expect(usageOf(usage)).toEqual(reported({ inputTokens: 36, outputTokens: 40, cacheReadTokens: 64, reasoningTokens: 30 }))
  })

  it("are read as those numbers: DeepSeek's cache hit and miss counts", () => {
    const usage = { prompt_tokens: '1200', completion_tokens: '40', prompt_cache_hit_tokens: '1024', prompt_cache_miss_tokens: '176' }
    expect(usageOf(usage)).toEqual(reported({ inputTokens: 176, outputTokens: 40, cacheReadTokens: 1024 }))
  })

  it('a string count alone counts: usage is reported, not estimated', () => {
    expect(usageOf({ completion_tokens: '5' })).toEqual(reported({ inputTokens: 0, outputTokens: 5 }))
  })

  it('are read up to the largest exact integer, leading zeros included', () => {
    expect(usageOf({ prompt_tokens: String(Number.MAX_SAFE_INTEGER), completion_tokens: '007' })).toEqual(reported({ inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: 7 }))
  })

  it('mixed with numbers, a cached count held to the prompt count as ever', () => {
    expect(usageOf({ prompt_tokens: 10, completion_tokens: '2', prompt_tokens_details: { cached_tokens: '50' } })).toEqual(reported({ inputTokens: 0, outputTokens: 2, cacheReadTokens: 10 }))
  })
})

describe('usage counts sent as other strings', () => {
  it.each([
    ['negative', '-1'],
    ['fractional', '1.5'],
    ['not a number', 'abc'],
    ['empty', ''],
    ['padded', ' 12'],
    ['signed', '+12'],
    ['exponent', '1e3'],
    ['hexadecimal', '0x10'],
    ['past 2^53', '9007199254740992'],
    ['far past 2^53', '1'.repeat(400)],
  ])('stay MALFORMED_RESPONSE, as a wrong-shaped count is: %s', (_case, value) => {
    const usages = [
      { prompt_tokens: value, completion_tokens: 1 },
      { prompt_tokens: 1, completion_tokens: value },
      { prompt_tokens: 1, prompt_tokens_details: { cached_tokens: value } },
      { completion_tokens: 1, completion_tokens_details: { reasoning_tokens: value } },
      { prompt_tokens: 1, prompt_cache_hit_tokens: value },
    ]
    expect(usages.map((usage) => [usage, usageOf(usage)])).toEqual(usages.map((usage) => [usage, 'MALFORMED_RESPONSE']))
  })
})

describe('an answer from a server that sends its usage counts as strings', () => {
  it('is kept and charged the counts the server sent', async () => {
    const usage = { prompt_tokens: '21', completion_tokens: '4', total_tokens: '25', prompt_tokens_details: { cached_tokens: '8' } }
    const { root } = await boot([{ usage: null, steps: [{ text: 'Hello there' }, { event: { id: 'c', choices: [], usage } }] }])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    const { finish, blocks } = await run(root)
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
    expect(blocks).toEqual([{ type: 'text', text: 'Hello there' }])
    expect(attempts[0]?.usage).toEqual({ inputTokens: 13, outputTokens: 4, cacheReadTokens: 8 })
    expect(attempts[0]).not.toHaveProperty('usageEstimated')
  })
})
