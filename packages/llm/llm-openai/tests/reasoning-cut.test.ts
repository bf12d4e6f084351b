// A reasoning model's stream that fails after it only thought (long reasoning, then a cut connection)
// is retried like one that showed nothing; the caller is told to drop the reasoning it showed.
import { addUsage, BlockAssembler, type LlmAttempt, type StreamChunk, type TokenUsage } from '@rein/llm'
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

const THOUGHT = 'Let me think about it.'
const thinking: MockStep[] = [{ reasoning: 'Let me think' }, { reasoning: ' about it.' }]
const answer = { steps: [{ reasoning: 'Easy.' }, { text: 'Four.' }], usage: { prompt_tokens: 20, completion_tokens: 6, completion_tokens_details: { reasoning_tokens: 2 } } }
const answered: TokenUsage = { inputTokens: 20, outputTokens: 6, reasoningTokens: 2 }

/** The deltas and discards of a stream, in order: what a caller shows and takes back. */
const shown = (chunks: readonly StreamChunk[]) => chunks.filter((chunk) => chunk.type.endsWith('-delta') || chunk.type === 'discard')

describe('a stream that fails after showing only reasoning', () => {
  it.each([
    ['the connection is cut', { disconnect: true }, 'STREAM_CLOSED'],
    ['the server reports an error in the stream', { error: { message: 'overloaded', type: 'server_error' } }, 'SERVER'],
    ['the server goes silent', { stall: true }, 'TIMEOUT'],
  ] as const)('is retried when %s, and the caller is told to discard that reasoning', async (_case, fault, code) => {
    const { root, server } = await boot([{ steps: [...thinking, fault] }, answer], { streamIdleTimeoutMs: 300 })
    const { chunks, events, blocks, finish } = await run(root)
    expect(server.requests).toHaveLength(2)
    expect(events.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && event.failure.code)).toEqual([code])
    expect(shown(chunks)).toEqual([
      { type: 'reasoning-delta', index: 0, text: 'Let me think' },
      { type: 'reasoning-delta', index: 0, text: ' about it.' },
      { type: 'discard' },
      { type: 'reasoning-delta', index: 0, text: 'Easy.' },
      { type: 'text-delta', index: 1, text: 'Four.' },
    ])
    // The failed attempt's reasoning is gone from what the caller keeps: only the answer's blocks.
    expect(blocks).toEqual([{ type: 'reasoning', text: 'Easy.' }, { type: 'text', text: 'Four.' }])
    expect(finish).toMatchObject({ type: 'finish', reason: 'stop' })
  })

  it('counts the failed attempt once, as an estimate, and the answer once, as reported', async () => {
    const { root } = await boot([{ steps: [...thinking, { disconnect: true }] }, answer])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    const { chunks } = await run(root)
    expect(attempts.map(({ retry, shown: wasShown, failure, usage, usageEstimated }) => ({ retry, shown: wasShown, code: failure?.code, usage, usageEstimated }))).toEqual([
      // The server counted nothing before the cut: output from the reasoning's characters, input from the request's.
      { retry: 0, shown: true, code: 'STREAM_CLOSED', usage: { inputTokens: expect.any(Number), outputTokens: Math.ceil(THOUGHT.length / 4) }, usageEstimated: true },
      { retry: 1, shown: true, code: undefined, usage: answered, usageEstimated: undefined },
    ])
    // The stream's own usage is the answer's alone: the estimate lives only in its attempt record.
    expect(chunks.filter((chunk) => chunk.type === 'usage')).toEqual([{ type: 'usage', usage: answered }])
  })

  it('counts usage the server reported before the cut once: in its attempt, and dropped from the stream with the reasoning', async () => {
    const early = { event: { id: 'chatcmpl-a', choices: [], usage: { prompt_tokens: 50, completion_tokens: 30 } } }
    const { root } = await boot([{ steps: [...thinking, early, { disconnect: true }] }, answer])
    const attempts: LlmAttempt[] = []
    root.on('llm/attempt', (event) => { attempts.push(event) })
    const assembler = new BlockAssembler()
    const { chunks } = await run(root, {}, (chunk) => assembler.push(chunk))
    expect(attempts.map((attempt) => [attempt.usage, attempt.usageEstimated])).toEqual([[{ inputTokens: 50, outputTokens: 30 }, undefined], [answered, undefined]])
    // The failed attempt's reported usage reached the caller before the discard, which takes it back.
    const discard = chunks.findIndex((chunk) => chunk.type === 'discard')
    expect(chunks.slice(0, discard)).toContainEqual({ type: 'usage', usage: { inputTokens: 50, outputTokens: 30 } })
    expect(chunks.slice(discard).filter((chunk) => chunk.type === 'usage')).toEqual([{ type: 'usage', usage: answered }])
    expect(assembler.usage).toEqual(answered)
    // Summed over attempts, every token counts once.
    expect(attempts.reduce((sum, attempt) => addUsage(sum, attempt.usage!), { inputTokens: 0, outputTokens: 0 })).toEqual({ inputTokens: 70, outputTokens: 36, reasoningTokens: 2 })
  })

  it('still fails with the cut when it was the last attempt allowed, keeping that attempt\'s reasoning', async () => {
    const { root, server } = await boot([{ steps: [...thinking, { disconnect: true }] }, { steps: [{ reasoning: 'Once more.' }, { disconnect: true }] }, answer], {}, { maxRetries: 1 })
    const { chunks, finish } = await run(root)
    expect(server.requests).toHaveLength(2)
    expect(finish).toEqual({ type: 'finish', reason: 'error', failure: { code: 'STREAM_CLOSED', message: 'OpenAI closed the connection mid-stream (the connection closed before the body ended)' } })
    // One discard, before the retry; the last attempt's reasoning stays with the caller.
    expect(chunks.filter((chunk) => chunk.type === 'discard')).toHaveLength(1)
    const assembler = new BlockAssembler()
    for (const chunk of chunks) assembler.push(chunk)
    expect(assembler.interruptedBlocks()).toEqual([{ type: 'reasoning', text: 'Once more.' }])
  })

  it.each([
    ['text', { text: 'Four' }],
    ['a tool call', { toolCall: { id: 'c1', name: 'add', arguments: ['{"a":', '2'] } }],
  ] as const)('is not retried once %s was shown after the reasoning', async (_case, step) => {
    const { root, server } = await boot([{ steps: [...thinking, step, { disconnect: true }] }, answer])
    const { chunks, events, finish } = await run(root)
    expect(server.requests).toHaveLength(1)
    expect(events.filter((event) => event.type === 'retry')).toEqual([])
    expect(chunks.some((chunk) => chunk.type === 'discard')).toBe(false)
    expect(finish.failure?.code).toBe('STREAM_CLOSED')
  })
})
