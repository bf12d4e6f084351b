// Found by the audit: `readSseData`, exported for tool authors, skipped the lines of a 200
// text/event-stream body that is no SSE at all (a relay's bare JSON error, a whole completion, an
// HTML page) and ended with no events, so a balance error read as an empty, successful stream. The
// chat stream path classifies such a body; readSseData now fails the same way.
import { isReinError } from '@rein/base'
import { LlmError } from '@rein/llm'
import { afterEach, describe, expect, it } from 'vitest'
import { readSseData, type SseOptions } from '../src/index.ts'
import { closeServers, serve } from './harness.ts'

afterEach(closeServers)

const sse = (body: string) => ({ kind: 'http' as const, status: 200, contentType: 'text/event-stream', body })
const error = (fields: Record<string, unknown>) => JSON.stringify({ error: fields })

/** Every `data` readSseData yields for a real 200 event stream holding `body`, or what it threw. */
async function readFromServer(body: string, options: Partial<SseOptions> = {}): Promise<{ events: string[]; failure?: unknown }> {
  const server = await serve(() => sse(body))
  const response = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{}' })
  const events: string[] = []
  try {
    for await (const data of readSseData(response.body!, { provider: 'P', idleTimeoutMs: 5_000, ...options })) events.push(data)
    return { events }
  } catch (failure) {
    return { events, failure }
  }
}

/** The `ReinError` code and message of a failure, or the failure itself when it is no `ReinError`. */
function described(failure: unknown) {
  return isReinError(failure) && failure instanceof LlmError ? { code: failure.code, message: failure.message } : failure
}

describe('readSseData on a 200 event stream holding a bare JSON error', () => {
  it.each([
    ['a balance error', error({ message: 'Insufficient Balance', type: 'insufficient_balance' }), 'QUOTA', 'Insufficient Balance'],
    ["DeepSeek's balance error, typed unknown_error", error({ message: 'Insufficient Balance', type: 'unknown_error', param: null, code: 'invalid_request_error' }), 'QUOTA', 'Insufficient Balance'],
    ['a rate limit', error({ message: 'Rate limit reached for requests', type: 'rate_limit_error' }), 'RATE_LIMIT', 'Rate limit reached for requests'],
    ['a context overflow', error({ message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' }), 'CONTEXT_WINDOW_EXCEEDED', "This model's maximum context length is 8192 tokens"],
    ["vLLM's older top-level error", JSON.stringify({ object: 'error', message: 'temperature must be non-negative', type: 'BadRequestError', code: 400 }), 'INVALID_REQUEST', 'temperature must be non-negative'],
    ['a bare string error', JSON.stringify({ error: 'upstream model crashed' }), 'SERVER', 'upstream model crashed'],
    ['a pretty-printed error after a keep-alive comment', `: keep-alive\n\n${JSON.stringify({ error: { message: 'Insufficient Balance', type: 'insufficient_balance' } }, null, 2)}\n`, 'QUOTA', 'Insufficient Balance'],
  ])('fails with its code and message instead of ending empty: %s', async (_case, body, code, said) => {
    const { events, failure } = await readFromServer(body)
    expect(events).toEqual([])
    expect(described(failure)).toEqual({ code, message: `P sent an error in place of an event stream: ${said}` })
  })

  it('cuts the credentials it is given, and anything key-shaped, out of the message', async () => {
    const { failure } = await readFromServer(error({ message: 'bad token hunter2-password or sk-abcdef0123456789', type: 'insufficient_balance' }), { secrets: ['hunter2-password'] })
    expect(described(failure)).toEqual({ code: 'QUOTA', message: 'P sent an error in place of an event stream: bad token [redacted] or [redacted]' })
  })
})

describe('readSseData on a 200 event stream holding no events, only other text', () => {
  it('fails MALFORMED_RESPONSE saying the server did not stream, instead of ending empty, when the text is a whole chat completion', async () => {
    const completion = { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Answer' }, finish_reason: 'stop' }] }
    const { failure } = await readFromServer(JSON.stringify(completion))
    expect(described(failure)).toMatchObject({ code: 'MALFORMED_RESPONSE', message: expect.stringContaining('although rein asked for a stream (stream: true)') })
  })

  it.each([
    ['an HTML page', '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\n', '"<html><head><title>502 Bad Gateway</title>'],
    ['plain text without a line break', 'Insufficient Balance', '"Insufficient Balance"'],
    ['JSON that is not an error', '{"status":"ok","data":[]}\n', '"{\\"status\\":\\"ok\\",\\"data\\":[]}"'],
  ])('fails STREAM_CLOSED quoting how it began, instead of ending empty: %s', async (_case, body, excerpt) => {
    const { events, failure } = await readFromServer(body)
    expect(events).toEqual([])
    expect(described(failure)).toMatchObject({ code: 'STREAM_CLOSED', message: expect.stringMatching(/^P sent no events in its event stream, only other text; it began /) })
    expect((failure as Error).message).toContain(excerpt)
  })
})

describe('readSseData on streams the check leaves alone', () => {
  it('still ends quietly with no events on a body of only comments and blank lines', async () => {
    expect(await readFromServer(': keep-alive\n\n\n: ping\n\n')).toEqual({ events: [] })
  })

  it('still yields every event of a stream with a stray line it does not know, then ends', async () => {
    expect(await readFromServer('not a field\n\ndata: {"a":1}\n\ndata: [DONE]\n\n')).toEqual({ events: ['{"a":1}', '[DONE]'] })
  })

  it('still ends quietly when other text comes after an event: the stream was SSE', async () => {
    expect(await readFromServer(`data: {"a":1}\n\n${error({ message: 'Insufficient Balance' })}\n`)).toEqual({ events: ['{"a":1}'] })
  })
})
