// A request the server received and then stalled on, before any byte of its answer, may be billed:
// however rein stops waiting (a cancel, its own header timeout), the attempt is charged an estimate
// of its input, as crash repair charges a request a kill cut off. A request that never got out
// (the connection refused) is charged nothing. The transport says when the body went out.
import { userMessage, type LlmAttempt, type LlmEvent, type LlmRequest } from '@rein/llm'
import type { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import { boot, bootAt, closeServers } from './harness.ts'

afterEach(closeServers)

const MESSAGES = [userMessage('a question of some length, to count', 'u1')]
/** The runtime's input estimate: what the model reads of the messages (4 tokens of framing each, and the text), four characters a token, rounded up. */
const INPUT = 4 + Math.ceil('a question of some length, to count'.length / 4)

async function attemptsOf(root: Context, request: Partial<LlmRequest> = {}): Promise<LlmAttempt[]> {
  const events: LlmEvent[] = []
  for await (const _ of root.llm.stream({ provider: 'openai', model: 'gpt-test', messages: MESSAGES, onEvent: (event) => { events.push(event) }, ...request })) {
    // drained
  }
  return events.filter((event) => event.type === 'attempt').map(({ type: _type, ...attempt }) => attempt as LlmAttempt)
}

describe('a request the server received and stalled on', () => {
  it('an attempt cancelled after its request reached the server is charged an estimate of its input', async () => {
    const controller = new AbortController()
    const { root } = await boot(() => {
      setImmediate(() => controller.abort())
      return { steps: [{ stall: true }] }
    }, { apiKeyEnv: false })
    const [attempt, ...more] = await attemptsOf(root, { signal: controller.signal })
    expect(more).toEqual([])
    expect(attempt).toMatchObject({ failure: { code: 'ABORTED' }, usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
  })

  it('an attempt rein timed out waiting for headers is charged the estimate too', async () => {
    const { root } = await boot([{ steps: [{ stall: true }] }], { apiKeyEnv: false, streamIdleTimeoutMs: 100 }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root)
    expect(attempt).toMatchObject({ failure: { code: 'TIMEOUT' }, usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
  })

  it('a request the server refused with an error status is charged nothing', async () => {
    const { root } = await boot([{ kind: 'error', status: 500, message: 'boom', type: 'server_error' }], { apiKeyEnv: false }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root)
    expect(attempt!.failure?.code).toBe('SERVER')
    expect(attempt!.usage).toBeUndefined()
  })

  it('a request the server answered with an in-stream 408 (TIMEOUT, no status) is charged nothing', async () => {
    const { root } = await boot([{ steps: [{ error: { message: 'request timed out upstream', code: 408 } }] }], { apiKeyEnv: false }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root)
    expect(attempt!.failure).toMatchObject({ code: 'TIMEOUT' })
    expect(attempt!.failure?.status).toBeUndefined()
    expect(attempt!.usage).toBeUndefined()
  })

  it('a 200 whose body is a relay\'s text, not a stream, is charged nothing', async () => {
    const { root } = await boot([{ kind: 'http', status: 200, contentType: 'text/event-stream', body: 'upstream connect error or disconnect/reset before headers' }], { apiKeyEnv: false }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root)
    expect(attempt!.failure?.code).toBe('STREAM_CLOSED')
    expect(attempt!.usage).toBeUndefined()
  })

  it('a request cancelled while the server stalls inside its error body is charged nothing', async () => {
    const controller = new AbortController()
    const { root } = await boot(() => {
      setTimeout(() => controller.abort(), 200)
      return { kind: 'error', status: 500, message: 'x'.repeat(200), stallAfterBytes: 10 }
    }, { apiKeyEnv: false }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root, { signal: controller.signal })
    expect(attempt!.failure?.code).toBe('ABORTED')
    expect(attempt!.usage).toBeUndefined()
  })

  it('a request cancelled while the server stalls inside a JSON error in place of a stream is charged nothing', async () => {
    const controller = new AbortController()
    const { root } = await boot(() => {
      setTimeout(() => controller.abort(), 200)
      return { kind: 'http', status: 200, contentType: 'application/json', body: JSON.stringify({ error: { message: 'x'.repeat(200) } }), stallAfterBytes: 10 }
    }, { apiKeyEnv: false }, { maxRetries: 0 })
    const [attempt] = await attemptsOf(root, { signal: controller.signal })
    expect(attempt!.failure?.code).toBe('ABORTED')
    expect(attempt!.usage).toBeUndefined()
  })

  it('a request whose connection was refused is charged nothing', async () => {
    const root = await bootAt('http://127.0.0.1:1/v1')
    const [attempt] = await attemptsOf(root)
    expect(attempt!.failure?.code).toBe('TRANSPORT')
    expect(attempt!.usage).toBeUndefined()
  })
})
