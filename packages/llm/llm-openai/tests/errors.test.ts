import { describe, expect, it } from 'vitest'
import { failureFromResponse, parseRetryAfter } from '../src/index.ts'

const body = (message: string, type = 'invalid_request_error', code: string | null = null) => JSON.stringify({ error: { message, type, param: null, code } })

describe('failureFromResponse', () => {
  it.each([
    [401, body('Incorrect API key provided', 'invalid_request_error', 'invalid_api_key'), 'AUTH'],
    [403, body('forbidden'), 'AUTH'],
    [402, body('Insufficient Balance', 'unknown_error'), 'QUOTA'],
    [429, body('You exceeded your current quota', 'insufficient_quota', 'insufficient_quota'), 'QUOTA'],
    [429, body('Rate limit reached', 'requests', 'rate_limit_exceeded'), 'RATE_LIMIT'],
    [408, body('timeout'), 'TIMEOUT'],
    [500, body('oops', 'server_error'), 'SERVER'],
    [503, body('Server overloaded', 'server_error'), 'SERVER'],
    [529, body('Overloaded', 'overloaded_error'), 'OVERLOADED'],
    [400, body("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", 'invalid_request_error', 'context_length_exceeded'), 'CONTEXT_WINDOW_EXCEEDED'],
    [400, body("This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion).", 'invalid_request_error', 'invalid_request_error'), 'CONTEXT_WINDOW_EXCEEDED'],
    [400, body('Invalid value for temperature'), 'INVALID_REQUEST'],
    [422, body('Unprocessable'), 'INVALID_REQUEST'],
    [404, 'Not Found', 'INVALID_REQUEST'],
  ])('maps HTTP %i to the right code (%#)', (status, text, code) => {
    expect(failureFromResponse('Test', status, text, new Headers()).code).toBe(code)
  })

  it('keeps the status, Retry-After and request id, and names the server', () => {
    const headers = new Headers({ 'retry-after': '2', 'x-request-id': 'req_123' })
    expect(failureFromResponse('OpenAI', 429, body('Rate limit reached', 'requests', 'rate_limit_exceeded'), headers)).toEqual({
      code: 'RATE_LIMIT', message: 'OpenAI returned HTTP 429: Rate limit reached', status: 429, retryAfterMs: 2000, requestId: 'req_123',
    })
  })

  it('uses the raw text when the body is not JSON', () => {
    expect(failureFromResponse('vLLM', 502, '<html>Bad Gateway</html>', new Headers()).message).toBe('vLLM returned HTTP 502: <html>Bad Gateway</html>')
    expect(failureFromResponse('vLLM', 500, '', new Headers()).message).toBe('vLLM returned HTTP 500: no error body')
  })
})

describe('parseRetryAfter', () => {
  it('reads milliseconds, seconds and HTTP dates', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }))).toBe(1500)
    expect(parseRetryAfter(new Headers({ 'retry-after': '3' }))).toBe(3000)
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined()
    expect(parseRetryAfter(new Headers())).toBeUndefined()
  })
})
