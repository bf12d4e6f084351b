// DeepSeek's failures over real HTTP against the testkit's mock server, as the audit probed them:
// error bodies that stall, balance errors in and out of the stream, wrong-shaped events, a stream
// that closes mid-call, and a key the server echoes back.
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { userMessage, type LlmEvent, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockScript, type MockServer } from '@rein/testkit'
import { inspect } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as deepseek from '../src/index.ts'

const KEY = 'sk-0123456789abcdef0123456789abcdef'
const servers: MockServer[] = []
beforeEach(() => {
  process.env.REIN_TEST_DEEPSEEK_KEY = KEY
})
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
  delete process.env.REIN_TEST_DEEPSEEK_KEY
})

async function run(script: MockScript, config: Partial<deepseek.Config> = {}) {
  const server = await startMockOpenAiServer(script)
  servers.push(server)
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(deepseek, { baseURL: server.url, label: 'DeepSeek', apiKeyEnv: 'REIN_TEST_DEEPSEEK_KEY', ...config })
  const chunks: StreamChunk[] = []
  const events: LlmEvent[] = []
  for await (const chunk of root.llm.stream({ provider: 'deepseek', model: 'deepseek-v4-pro', messages: [userMessage('hi', 'u1')], onEvent: (event) => { events.push(event) } })) chunks.push(chunk)
  return { finish: chunks.at(-1) as Extract<StreamChunk, { type: 'finish' }>, chunks, events, requests: server.requests.length }
}

const answer = { dialect: 'deepseek', steps: [{ text: 'ok' }] } as const

describe('DeepSeek error paths', () => {
  it('a 402 whose body stalls is QUOTA, not retried, and says the body stalled', async () => {
    const { finish, requests } = await run([{ kind: 'error', status: 402, message: 'Insufficient Balance', stallAfterBytes: 10 }, answer], { streamIdleTimeoutMs: 200 })
    expect(finish.failure).toMatchObject({ code: 'QUOTA', status: 402 })
    expect(finish.failure?.message).toContain('the error body stalled after 10 bytes')
    expect(requests).toBe(1)
  })

  it('a 400 context-length body that stalls after its words is still CONTEXT_WINDOW_EXCEEDED', async () => {
    const message = "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion)."
    const { finish, requests } = await run([{ kind: 'error', status: 400, type: 'invalid_request_error', code: 'invalid_request_error', message, stallAfterBytes: 90 }], { streamIdleTimeoutMs: 200 })
    expect(finish.failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect(requests).toBe(1)
  })

  it.each([
    [429, 'RATE_LIMIT', { kind: 'error', status: 429, message: 'Rate Limit Reached', type: 'rate_limit_error' }],
    [500, 'SERVER', { kind: 'error', status: 500, message: 'Internal Server Error', type: 'server_error' }],
    [503, 'SERVER', { kind: 'error', status: 503, message: 'Server Overloaded', type: 'server_error' }],
  ] as const)('HTTP %i is %s, retried, and the next attempt answers', async (_status, code, reply) => {
    const { finish, events, requests } = await run([reply, answer])
    expect(finish).toMatchObject({ reason: 'stop', replayState: { dialect: 'deepseek' } })
    expect(events.filter((event) => event.type === 'retry').map((event) => event.type === 'retry' && event.failure.code)).toEqual([code])
    expect(requests).toBe(2)
  })

  it('"Insufficient Balance" inside the stream after reasoning is QUOTA, not retried', async () => {
    const { finish, requests } = await run([{ dialect: 'deepseek', steps: [{ reasoning: 'Hm.' }, { error: { message: 'Insufficient Balance', type: 'unknown_error' } }] }, answer])
    expect(finish.failure).toMatchObject({ code: 'QUOTA', message: 'DeepSeek reported an error mid-stream: Insufficient Balance' })
    expect(requests).toBe(1)
  })

  it('a reasoning_content that is no string is MALFORMED_RESPONSE, naming the field, not retried', async () => {
    const { finish, requests } = await run([{ dialect: 'deepseek', steps: [{ event: { choices: [{ index: 0, delta: { reasoning_content: 5 } }] } }] }, answer])
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE', message: 'DeepSeek sent a stream event whose choices[0].delta.reasoning_content is number 5, not a string' })
    expect(requests).toBe(1)
  })

  it('a stream closed in the middle of a tool call is STREAM_CLOSED, the call shown, not retried', async () => {
    const { finish, chunks, requests } = await run([{ dialect: 'deepseek', steps: [{ reasoning: 'Hm.' }, { toolCall: { id: 'call_1', name: 'read', arguments: ['{"pa'] } }, { disconnect: true }] }, answer])
    expect(finish.failure?.code).toBe('STREAM_CLOSED')
    expect(chunks.some((chunk) => chunk.type === 'tool-call-delta')).toBe(true)
    expect(requests).toBe(1)
  })

  it('never shows the key a server echoes, in an error status or inside the stream', async () => {
    const echoed = await run([{ kind: 'error', status: 401, message: `Authentication Fails, your api key ${KEY} is invalid`, type: 'authentication_error' }])
    expect(echoed.finish.failure).toMatchObject({ code: 'AUTH' })
    const inStream = await run([{ dialect: 'deepseek', steps: [{ error: { message: `bad key ${KEY}` } }] }])
    for (const result of [echoed, inStream]) expect(inspect(result, { depth: 20 })).not.toContain(KEY.slice(3))
  })
})
