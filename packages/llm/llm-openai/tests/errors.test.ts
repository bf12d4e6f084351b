import { describe, expect, it } from 'vitest'
import { failureFromResponse, failureFromStreamError, failureFromTransportError, parseRetryAfter } from '../src/index.ts'

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

/*
 * Context-overflow wordings, taken from each project's source:
 * - llama.cpp server: tools/server/server-context.cpp (send_error "request (%d tokens) exceeds the
 *   available context size (%d tokens), try increasing it", ERROR_TYPE_EXCEED_CONTEXT_SIZE), mapped by
 *   tools/server/server-common.cpp format_error_response to {code: 400, type: "exceed_context_size_error"};
 *   tools/server/server-task.cpp adds n_prompt_tokens and n_ctx.
 * - vLLM: vllm/v1/engine/input_processor.py _validate_prompt_len ("The decoder prompt (length N) is longer
 *   than the maximum model length of M. …"), sent by vllm/entrypoints/openai/engine/serving.py
 *   create_error_response / create_streaming_error_response as {"error": {message, type: "BadRequestError", code: 400}}.
 * - Ollama: llm/llama_server.go ("the prompt is longer than the context length currently available to
 *   the model; …", HTTP 400) and server/routes.go ("the input length exceeds the context length"),
 *   wrapped by openai/openai.go NewError; llm/llama_server.go also passes llama-server's own error body through.
 */
const llamaCpp = (prompt: number, ctx: number) => ({ code: 400, message: `request (${prompt} tokens) exceeds the available context size (${ctx} tokens), try increasing it`, type: 'exceed_context_size_error', n_prompt_tokens: prompt, n_ctx: ctx })
const vllm = (prompt: number, ctx: number) => ({ message: `The decoder prompt (length ${prompt}) is longer than the maximum model length of ${ctx}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`, type: 'BadRequestError', param: null, code: 400 })
const vllmPlusOutput = { message: 'The decoder prompt (length 4096) plus the number of requested output tokens (at least 1) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens (prompt + requested output tokens).', type: 'BadRequestError', param: null, code: 400 }
const ollama = { message: 'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length', type: 'invalid_request_error', param: null, code: null }
const ollamaEmbed = { message: 'the input length exceeds the context length', type: 'invalid_request_error', param: null, code: null }
const ollamaPassthrough = { message: JSON.stringify({ error: llamaCpp(5000, 4096) }), type: 'invalid_request_error', param: null, code: null }
const llamaCppLarger = { code: 400, message: 'input (5000 tokens) is larger than the max context size (4096 tokens). skipping', type: 'exceed_context_size_error' }

describe('context overflow of local servers', () => {
  it.each([
    ['llama.cpp', llamaCpp(9739, 8192)],
    ['llama.cpp (non-splittable input)', llamaCppLarger],
    ['vLLM', vllm(9739, 8192)],
    ['vLLM (prompt plus output)', vllmPlusOutput],
    ['Ollama', ollama],
    ['Ollama (input)', ollamaEmbed],
    ['Ollama (llama-server body passed through)', ollamaPassthrough],
  ])('classifies %s wording on HTTP 400 as CONTEXT_WINDOW_EXCEEDED', (_server, error) => {
    expect(failureFromResponse('Local', 400, JSON.stringify({ error }), new Headers()).code).toBe('CONTEXT_WINDOW_EXCEEDED')
  })

  it('classifies vLLM\'s older top-level error object too', () => {
    const body = JSON.stringify({ object: 'error', ...vllm(9000, 8192) })
    expect(failureFromResponse('vLLM', 400, body, new Headers()).code).toBe('CONTEXT_WINDOW_EXCEEDED')
  })

  it.each([
    ['llama.cpp', llamaCpp(9739, 8192)],
    ['llama.cpp (non-splittable input)', llamaCppLarger],
    ['vLLM', vllm(9739, 8192)],
    ['Ollama', ollama],
  ])('classifies %s wording inside the stream as CONTEXT_WINDOW_EXCEEDED', (_server, error) => {
    expect(failureFromStreamError('Local', error)).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', message: `Local reported an error mid-stream: ${error.message}` })
  })

  it.each([
    ['a rate limit whose words mention tokens', { message: 'Rate limit exceeded: too many tokens per minute, retry later', code: 429 }, 'RATE_LIMIT'],
    ['a busy server whose words mention tokens', { message: 'Service overloaded; too many tokens in flight', code: 503 }, 'SERVER'],
    ['an overload that names the context window', { message: 'The context window is fine; the server is overloaded', code: 529 }, 'OVERLOADED'],
    ['a status written as a string', { message: 'upstream error', code: '429' }, 'RATE_LIMIT'],
  ])('reads an in-stream status code before the wording: %s is not a context overflow', (_case, error, code) => {
    expect(failureFromStreamError('vLLM', error).code).toBe(code)
  })

  it('keeps other 400s INVALID_REQUEST and uses an in-stream numeric code like a status', () => {
    expect(failureFromResponse('vLLM', 400, JSON.stringify({ error: { message: 'temperature must be non-negative', type: 'BadRequestError', code: 400 } }), new Headers()).code).toBe('INVALID_REQUEST')
    expect(failureFromStreamError('vLLM', { message: 'temperature must be non-negative', type: 'BadRequestError', code: 400 }).code).toBe('INVALID_REQUEST')
    expect(failureFromStreamError('vLLM', { message: 'engine dead', type: 'InternalServerError', code: 500 }).code).toBe('SERVER')
  })
})

describe('model not found', () => {
  it.each([
    ['OpenAI', 404, { message: 'The model `gpt-9` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' }],
    ['vLLM', 404, { message: 'The model `gpt-9` does not exist.', type: 'NotFoundError', param: 'model', code: 404 }],
    ['Ollama', 404, { message: "model 'gpt-9' not found", type: 'not_found_error', param: null, code: null }],
    ['llama.cpp router', 400, { code: 400, message: 'model not found', type: 'invalid_request_error' }],
    ['DeepSeek', 400, { message: 'Model Not Exist', type: 'invalid_request_error', param: null, code: 'invalid_request_error' }],
  ])('marks %s (HTTP %i) modelNotFound, keeps INVALID_REQUEST, and names the model', (_server, status, error) => {
    expect(failureFromResponse('Srv', status, JSON.stringify({ error }), new Headers(), 'gpt-9')).toMatchObject({
      code: 'INVALID_REQUEST', status, modelNotFound: true, message: expect.stringContaining('gpt-9'),
    })
  })

  it('does not mark a plain 404 (a wrong path) as model not found', () => {
    expect(failureFromResponse('Srv', 404, '404 page not found', new Headers(), 'gpt-9')).not.toHaveProperty('modelNotFound')
  })
})

describe('failureFromTransportError', () => {
  const url = 'http://h:1/v1/chat/completions'

  it('reads the code from Node\'s error, from each attempt of an AggregateError, and from fetch\'s cause', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const aggregate = Object.assign(new AggregateError([refused, refused], ''), {})
    for (const error of [refused, aggregate, new TypeError('fetch failed', { cause: refused })]) {
      expect(failureFromTransportError('P', url, error)).toEqual({ code: 'TRANSPORT', message: `could not reach P: connection refused at ${url} (ECONNREFUSED); is the server running?` })
    }
  })

  it('marks a host that does not resolve (ENOTFOUND) permanent, not to be retried; a passing DNS fault (EAI_AGAIN) and a refused connection are not', () => {
    const failure = (code: string) => failureFromTransportError('P', url, new TypeError('fetch failed', { cause: Object.assign(new Error(`getaddrinfo ${code} h`), { code }) }))
    expect(failure('ENOTFOUND')).toEqual({ code: 'TRANSPORT', message: `could not reach P: host not found at ${url} (ENOTFOUND); check the host in baseURL`, permanent: true })
    expect(failure('EAI_AGAIN')).not.toHaveProperty('permanent')
    expect(failure('ECONNREFUSED')).not.toHaveProperty('permanent')
  })

  it('names a refused connection when one of several attempts was refused and another could not route', () => {
    const unreachable = Object.assign(new Error('connect ENETUNREACH ::1:1'), { code: 'ENETUNREACH' })
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
    const aggregate = Object.assign(new AggregateError([unreachable, refused], ''), { code: 'ENETUNREACH' })
    expect(failureFromTransportError('P', url, aggregate).message).toBe(`could not reach P: connection refused at ${url} (ECONNREFUSED); is the server running?`)
  })

  it('words a DNS server that did not answer (EAI_AGAIN) as the passing fault it is, not as a host that does not exist', () => {
    const failed = Object.assign(new Error('getaddrinfo EAI_AGAIN h'), { code: 'EAI_AGAIN' })
    expect(failureFromTransportError('P', url, failed)).toEqual({ code: 'TRANSPORT', message: `could not reach P: temporary DNS failure at ${url} (EAI_AGAIN); check the host in baseURL and the network` })
  })

  it('words every certificate failure Node reports by its code, as otel-http words it (@rein/base)', () => {
    const failure = (code: string) => failureFromTransportError('P', url, Object.assign(new Error(code === 'CERT_HAS_EXPIRED' ? 'certificate has expired' : code), { code })).message
    expect(failure('CERT_HAS_EXPIRED')).toBe(`could not reach P: expired TLS certificate at ${url} (CERT_HAS_EXPIRED)`)
    expect(failure('CERT_NOT_YET_VALID')).toBe(`could not reach P: TLS certificate not valid yet at ${url} (CERT_NOT_YET_VALID)`)
    expect(failure('UNABLE_TO_GET_ISSUER_CERT')).toBe(`could not reach P: TLS certificate from an unknown CA at ${url} (UNABLE_TO_GET_ISSUER_CERT)`)
    expect(failure('ERR_TLS_CERT_ALTNAME_INVALID')).toBe(`could not reach P: TLS certificate for another host name at ${url} (ERR_TLS_CERT_ALTNAME_INVALID)`)
  })

  it('names a failed TLS handshake by OpenSSL\'s reason, and a plain-HTTP server by its wrong version number', () => {
    const eproto = (message: string) => failureFromTransportError('P', url, Object.assign(new Error(message), { code: 'EPROTO' })).message
    expect(eproto('write EPROTO 40E8:error:0A000102:SSL routines::unsupported protocol:../deps/openssl/openssl/ssl/statem/statem_lib.c:1986:'))
      .toBe(`could not reach P: TLS handshake failed: unsupported protocol at ${url} (EPROTO)`)
    expect(eproto('write EPROTO 40E8:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:ssl/record/rec_layer_s3.c:1584:SSL alert number 40'))
      .toBe(`could not reach P: TLS handshake failed: sslv3 alert handshake failure at ${url} (EPROTO)`)
    expect(eproto('write EPROTO')).toBe(`could not reach P: TLS handshake failed at ${url} (EPROTO)`)
    expect(eproto('write EPROTO 40E8:error:0A00010B:SSL routines::wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:354:'))
      .toBe(`could not reach P: no TLS on the server at ${url} (ERR_SSL_WRONG_VERSION_NUMBER); is it an http:// server?`)
  })

  it('takes a code named like an object\'s own property for an unknown code, not for words', () => {
    const odd = Object.assign(new Error('odd'), { code: 'constructor' })
    expect(failureFromTransportError('P', url, odd).message).toBe(`could not reach P at ${url}: odd (constructor)`)
  })

  it('keeps Node\'s words and code for a code it has no plain words for, and words without a code as they are', () => {
    const odd = Object.assign(new Error('Invalid character in header content ["x-title"]'), { code: 'ERR_INVALID_CHAR' })
    expect(failureFromTransportError('P', url, odd).message).toBe(`could not reach P at ${url}: Invalid character in header content ["x-title"] (ERR_INVALID_CHAR)`)
    expect(failureFromTransportError('P', url, new Error('something else')).message).toBe(`could not reach P at ${url}: something else`)
    expect(failureFromTransportError('P', url, 'a string').message).toBe(`could not reach P at ${url}: a string`)
  })
})
