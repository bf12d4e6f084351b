// A kill -9 while an answer streams: the provider bills what it had streamed, yet the log held
// only the request's mark, so repair counted the cut-off attempt's output as 0 tokens. While an
// answer streams, the agent now leaves a mark of how much it has streamed (every 4,000
// characters, kept across a kill without waiting for the disk), and repair counts from the last.
import type { AdapterRequest, ModelInfo, StreamChunk } from '@rein/llm'
import { eventData, MemorySessionStore, type SessionEvent } from '@rein/session'
import type { ScriptedLlm } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import { boot, expectValidLog, killed } from './fixtures.ts'

const MODELS: ModelInfo[] = [{ id: 'm', pricing: { input: 3, output: 15 } }]

/** From now on every request streams `chars` characters of text in pieces of 500, then never ends; resolves once all of it was streamed. */
function streamThenStall(llm: ScriptedLlm, chars: number): Promise<void> {
  return new Promise((streamed) => {
    Object.assign(llm, {
      stream: (request: AdapterRequest) => {
        llm.requests.push(request)
        return (async function* (): AsyncGenerator<StreamChunk> {
          yield { type: 'block-start', index: 0, blockType: 'text' }
          for (let sent = 0; sent < chars; sent += 500) yield { type: 'text-delta', index: 0, text: 'x'.repeat(500) }
          streamed()
          await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }))
        })()
      },
    })
  })
}

const cutAttempts = (events: readonly SessionEvent[]) => events
  .filter((event) => event.type === 'llm/attempt' && eventData(event, 'llm/attempt').failure?.code === 'ABORTED')
  .map((event) => eventData(event, 'llm/attempt'))

describe('an answer cut off by a kill while it streamed', () => {
  it('is counted on resume with the output it had streamed, to its last mark, not as no output', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([], { models: MODELS, store })
    const agent = await root.agents.create({ sessionId: 'long' })
    const streamed = streamThenStall(llm, 10_000)
    const running = agent.send('write a lot')
    await streamed
    // The marks are written without waiting for the disk: let the write of the last one land.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const left = await killed(store, 'long')
    agent.cancel()
    await running.catch(() => {})
    const marks = (await left.load('long')).events.filter((event) => event.type === 'llm/progress').map((event) => eventData(event, 'llm/progress'))
    expect(marks).toEqual([{ outputChars: 4_000 }, { outputChars: 8_000 }])

    const next = await boot([], { models: MODELS, store: left })
    const { agent: resumed } = await next.root.agents.resume('long')
    await resumed.close()
    const { events } = await left.load('long')
    const [cut, ...others] = cutAttempts(events)
    expect(others).toEqual([])
    // 8,000 characters at 4 a token; priced at 15 per million output tokens.
    expect(cut).toMatchObject({ usageEstimated: true, usage: { outputTokens: 2_000 }, failure: { message: expect.stringContaining('the output it had streamed is counted from its last mark (8000 characters)') } })
    expect(cut!.usage!.inputTokens).toBeGreaterThan(0)
    expect(cut!.cost).toBeCloseTo((cut!.usage!.inputTokens * 3 + 2_000 * 15) / 1_000_000, 12)
    expectValidLog(events)
  })
})
