// Found by the audit (t11-empty-usage): a usage object that counts nothing (`"usage": {}`, or its
// counts null) was booked as 0 tokens in, 0 out, so the runtime's estimate from characters, made only
// when no usage came, never applied and token budgets never triggered.
import type { JsonValue } from '@rein/base'
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

/** What a stream of `answer` then a closing chunk with `usage` reports, at its end and while it runs. */
function usageOf(...usages: unknown[]) {
  const translator = createChunkTranslator('Test')
  const chunks: StreamChunk[] = translator.push(answer)
  for (const usage of usages) chunks.push(...translator.push({ choices: [], usage }))
  const soFar = translator.usageSoFar()
  chunks.push(...translator.end(true))
  return { soFar, reported: chunks.filter((chunk) => chunk.type === 'usage') }
}

const countless: [string, JsonValue][] = [
  ['an empty object', {}],
  ['null counts', { prompt_tokens: null, completion_tokens: null }],
  ['null counts and a null total', { prompt_tokens: null, completion_tokens: null, total_tokens: null }],
  ['only a total', { total_tokens: 40 }],
  ['only empty details', { prompt_tokens_details: { cached_tokens: null }, completion_tokens_details: null }],
]

describe('a usage object without prompt or completion counts', () => {
  it.each(countless)('is no usage at all, not 0 in / 0 out: %s', (_case, usage) => {
    expect(usageOf(usage)).toEqual({ soFar: undefined, reported: [] })
  })

  it('does not replace usage that counted tokens before it', () => {
    expect(usageOf({ prompt_tokens: 9, completion_tokens: 2 }, {}).reported).toEqual([{ type: 'usage', usage: { inputTokens: 9, outputTokens: 2 } }])
  })

  it.each([
    ['a prompt count alone', { prompt_tokens: 12, completion_tokens: null }, { inputTokens: 12, outputTokens: 0 }],
    ['a completion count alone', { completion_tokens: 5 }, { inputTokens: 0, outputTokens: 5 }],
    ['counts of zero', { prompt_tokens: 0, completion_tokens: 0 }, { inputTokens: 0, outputTokens: 0 }],
  ])('is still read when it carries %s', (_case, usage, expected) => {
    expect(usageOf(usage).reported).toEqual([{ type: 'usage', usage: expected }])
  })

  it('still counts as the closing usage chunk: the answer ends without waiting for [DONE]', () => {
    const translator = createChunkTranslator('Test')
    translator.push(answer)
    translator.push({ choices: [], usage: {} })
    expect(translator.complete()).toBe(true)
  })
})

describe('attempt records of a server that sends usage without counts', () => {
  const long = 'a fairly long answer '.repeat(40)

  it.each(countless)('estimate the usage, as for a server that sends none: %s', async (_case, usage) => {
    const { root } = await boot([
      { usage: null, steps: [{ text: long }] },
      { usage: null, steps: [{ text: long }, { event: { id: 'c', choices: [], usage } }] },
    ])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    await run(root)
    await run(root)
    expect(attempts[0]).toMatchObject({ usageEstimated: true, usage: { outputTokens: Math.ceil(long.length / 4) } })
    expect(attempts[1]).toMatchObject({ usageEstimated: true, usage: attempts[0]?.usage })
  })

  it('keep a usage that counted tokens, unestimated', async () => {
    const { root } = await boot([{ usage: null, steps: [{ text: long }, { event: { id: 'c', choices: [], usage: { prompt_tokens: 30, completion_tokens: null } } }] }])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    await run(root)
    expect(attempts[0]?.usage).toEqual({ inputTokens: 30, outputTokens: 0 })
    expect(attempts[0]).not.toHaveProperty('usageEstimated')
  })
})
