// An attempt whose request reached the server and that ended without the server saying how (rein
// cancelled it, timed out waiting, or lost the connection) may be billed: it is charged an estimate
// of its input, as crash repair charges a request a kill cut off. One that never went out, or that
// the server refused, is charged nothing.
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { LlmError, LlmRuntime, userMessage, type AdapterRequest, type LlmAttempt, type LlmEvent, type LlmFailure, type StreamChunk } from '../src/index.ts'

const MESSAGES = [userMessage('a question of some length, to count', 'u1')]
/** The input estimate: what the model reads of the messages (4 tokens of framing each, and the text), four characters a token, rounded up. */
const INPUT = 4 + Math.ceil('a question of some length, to count'.length / 4)

async function runtime() {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  return root
}

/** Runs one request on `stream` (cancelled by `signal`, if given) and returns its attempt record. */
async function attemptOf(stream: (request: AdapterRequest) => AsyncIterable<StreamChunk>, signal?: AbortSignal): Promise<LlmAttempt> {
  const root = await runtime()
  root.llm.registerAdapter('p', { stream })
  const events: LlmEvent[] = []
  for await (const _ of root.llm.stream({ provider: 'p', model: 'm', messages: MESSAGES, ...(signal ? { signal } : {}), onEvent: (event) => { events.push(event) } })) {
    // drained
  }
  const { type: _type, ...attempt } = events.find((event): event is Extract<LlmEvent, { type: 'attempt' }> => event.type === 'attempt')!
  return attempt
}

const untilAborted = (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))

/** An adapter's stream that yields nothing: `body` runs at the first read and ends it by throwing. */
function nothingBut(body: (request: AdapterRequest) => Promise<never>) {
  return (request: AdapterRequest): AsyncIterable<StreamChunk> => ({ [Symbol.asyncIterator]: () => ({ next: () => body(request) }) })
}

/** Sends (if `sent`) and then waits, with no byte back, until the attempt is stopped. */
function stalling(sent: boolean, started: () => void) {
  return nothingBut(async (request) => {
    if (sent) request.sent?.()
    started()
    await untilAborted(request.signal)
    throw request.signal.reason
  })
}

/** Sends, then fails with `failure` before any byte of an answer. */
function failingAfterSending(failure: LlmFailure) {
  return nothingBut(async (request) => {
    request.sent?.()
    throw new LlmError(failure)
  })
}

async function cancelled(sent: boolean): Promise<LlmAttempt> {
  const controller = new AbortController()
  return await attemptOf(stalling(sent, () => setImmediate(() => controller.abort())), controller.signal)
}

describe('an attempt that ended without a word from the server', () => {
  it('an attempt cancelled after its request reached the server is charged an estimate of its input, no output', async () => {
    const attempt = await cancelled(true)
    expect(attempt).toMatchObject({ failure: { code: 'ABORTED' }, finishReason: 'aborted', usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
  })

  it('an attempt that timed out on a server its request reached is charged an estimate of its input', async () => {
    const attempt = await attemptOf(failingAfterSending({ code: 'TIMEOUT', message: 'the server sent no response for 5 ms' }))
    expect(attempt).toMatchObject({ failure: { code: 'TIMEOUT' }, usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
  })

  it('an attempt whose connection closed after its request went out is charged an estimate of its input', async () => {
    for (const code of ['TRANSPORT', 'STREAM_CLOSED'] as const) {
      const attempt = await attemptOf(failingAfterSending({ code, message: 'the connection closed before the body ended' }))
      expect(attempt).toMatchObject({ failure: { code }, usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
    }
  })

  it('an adapter that does not say when it sent counts as having sent once it yields a chunk', async () => {
    const controller = new AbortController()
    const attempt = await attemptOf(async function* (request) {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      controller.abort()
      await untilAborted(request.signal)
    }, controller.signal)
    expect(attempt).toMatchObject({ failure: { code: 'ABORTED' }, usage: { inputTokens: INPUT, outputTokens: 0 }, usageEstimated: true })
  })
})

describe('an attempt that is charged nothing', () => {
  it('an attempt cancelled before its request went out is charged nothing', async () => {
    const attempt = await cancelled(false)
    expect(attempt.failure?.code).toBe('ABORTED')
    expect(attempt.usage).toBeUndefined()
    expect(attempt.usageEstimated).toBeUndefined()
  })

  it('an attempt the server ended with an error finish is charged nothing, with or without a failure on it', async () => {
    const finishes: StreamChunk[] = [
      { type: 'finish', reason: 'error' },
      { type: 'finish', reason: 'error', failure: { code: 'TIMEOUT', message: 'reported an error mid-stream: upstream timeout' } },
    ]
    for (const finish of finishes) {
      const attempt = await attemptOf(async function* (request) {
        request.sent?.()
        yield finish
      })
      expect(attempt.failure).toBeDefined()
      expect(attempt.usage).toBeUndefined()
    }
  })

  it('an attempt the adapter said was refused, cancelled while its error body is read, is charged nothing', async () => {
    const controller = new AbortController()
    const attempt = await attemptOf(nothingBut(async (request) => {
      request.sent?.()
      request.refused?.()
      setImmediate(() => controller.abort())
      await untilAborted(request.signal)
      throw request.signal.reason
    }), controller.signal)
    expect(attempt.failure?.code).toBe('ABORTED')
    expect(attempt.usage).toBeUndefined()
  })

  it('a request the server refused (an error status, or an error it sent) is charged nothing', async () => {
    const refusals: LlmFailure[] = [
      { code: 'SERVER', message: 'HTTP 500', status: 500 },
      { code: 'TIMEOUT', message: 'HTTP 408', status: 408 },
      { code: 'RATE_LIMIT', message: 'reported an error mid-stream: slow down' },
      { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' },
    ]
    for (const failure of refusals) {
      const attempt = await attemptOf(failingAfterSending(failure))
      expect(attempt.failure?.code).toBe(failure.code)
      expect(attempt.usage).toBeUndefined()
    }
  })
})
