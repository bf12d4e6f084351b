// Provider wordings and configuration faults, end to end: real HTTP, a real LlmRuntime.
import { lookup } from 'node:dns/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@rein/llm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as openai from '../src/index.ts'
import { boot, bootAt, closeServers, KEY, run, serve } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const servers = ['openai', 'deepseek', 'llama.cpp', 'vllm', 'ollama'] as const

describe('context overflow over HTTP', () => {
  it.each(servers)('ends %s\'s overflow status with CONTEXT_WINDOW_EXCEEDED, not retried or sent to a fallback', async (kind) => {
    const { root, server } = await boot([{ kind: 'context-overflow', server: kind }, { steps: [{ text: 'never' }] }])
    const backup = await serve([{ steps: [{ text: 'never' }] }])
    await root.plugin(openai, { provider: 'backup', baseURL: backup.url, apiKeyEnv: false })
    const { finish } = await run(root, { fallbacks: [{ provider: 'backup', model: 'm' }] })
    expect(finish.failure).toMatchObject({ code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 })
    expect([server.requests.length, backup.requests.length]).toEqual([1, 0])
  })

  it.each(servers)('ends %s\'s overflow inside the stream with CONTEXT_WINDOW_EXCEEDED', async (kind) => {
    const { root, server } = await boot([{ kind: 'context-overflow', server: kind, inStream: true }, { steps: [{ text: 'never' }] }])
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('CONTEXT_WINDOW_EXCEEDED')
    expect(server.requests).toHaveLength(1)
  })
})

describe('model not found over HTTP', () => {
  it.each(servers)('falls back when %s does not serve the model, naming the model', async (kind) => {
    const { root, server } = await boot([{ kind: 'model-not-found', server: kind }])
    const backup = await serve([{ steps: [{ text: 'from the backup' }] }])
    await root.plugin(openai, { provider: 'backup', baseURL: backup.url, apiKeyEnv: false })
    const { blocks, events } = await run(root, { model: 'gpt-9', fallbacks: [{ provider: 'backup', model: 'small' }] })
    expect(blocks).toEqual([{ type: 'text', text: 'from the backup' }])
    const fallback = events.find((event) => event.type === 'fallback')
    expect(fallback).toMatchObject({ from: { provider: 'openai', model: 'gpt-9' }, to: { provider: 'backup', model: 'small' }, failure: { code: 'INVALID_REQUEST', modelNotFound: true } })
    expect(fallback?.type === 'fallback' && fallback.failure.message).toContain('gpt-9')
    expect(server.requests).toHaveLength(1)
  })
})

describe('connection failures', () => {
  it('says "connection refused at <url>" when nothing listens', async () => {
    const server = await serve([])
    await server.close()
    const root = await bootAt(server.url, { label: 'local' })
    const { finish } = await run(root)
    expect(finish.failure).toEqual({ code: 'TRANSPORT', message: `could not reach local: connection refused at ${server.url}/chat/completions (ECONNREFUSED); is the server running?` })
  })

  it('says "connection refused" for a host name as for an address (localhost)', async () => {
    const server = await serve([])
    await server.close()
    const url = server.url.replace('127.0.0.1', 'localhost')
    const { finish } = await run(await bootAt(url, { label: 'local' }))
    expect(finish.failure).toEqual({ code: 'TRANSPORT', message: `could not reach local: connection refused at ${url}/chat/completions (ECONNREFUSED); is the server running?` })
  })

  it('says "host not found" for a name that does not resolve (offline: a temporary DNS failure)', async () => {
    const root = await bootAt('http://no-such-host.invalid/v1', { label: 'local' })
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('TRANSPORT')
    expect(finish.failure?.message).toMatch(/^could not reach local: (host not found|temporary DNS failure) at http:\/\/no-such-host\.invalid\/v1\/chat\/completions \((ENOTFOUND|EAI_AGAIN)\)/)
  })
})

// Only where DNS answers "no such name": offline, the same lookup is a passing EAI_AGAIN.
const notFound = await lookup('no-such-host.invalid').then(() => false, (error: NodeJS.ErrnoException) => error.code === 'ENOTFOUND')

describe('a host that does not resolve', () => {
  it.skipIf(!notFound)('fails at once, not retried, with "host not found"', async () => {
    const root = await bootAt('http://no-such-host.invalid/v1', { label: 'local' }, 4)
    const { finish, events } = await run(root)
    expect(events.filter((event) => event.type === 'retry')).toEqual([])
    expect(finish.failure).toEqual({ code: 'TRANSPORT', message: 'could not reach local: host not found at http://no-such-host.invalid/v1/chat/completions (ENOTFOUND); check the host in baseURL', permanent: true })
  })
})

describe('answers that are not what was asked for', () => {
  it('names where a redirect points instead of following it', async () => {
    const { root, server } = await boot([{ kind: 'http', status: 308, contentType: 'text/plain', body: 'moved', headers: { location: 'https://api.example.com/v2/chat/completions' } }], {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'INVALID_REQUEST', status: 308 })
    expect(finish.failure?.message).toContain(`redirected to https://api.example.com/v2/chat/completions; set baseURL to the address it names, redirects are not followed`)
    expect(server.requests).toHaveLength(1)
  })

  it('fails a compressed event stream with MALFORMED_RESPONSE naming its encoding, though none was accepted', async () => {
    const { root, server } = await boot([{ kind: 'http', status: 200, contentType: 'text/event-stream', body: '\u001f\u008b garbage', headers: { 'content-encoding': 'gzip' } }], {}, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure).toMatchObject({ code: 'MALFORMED_RESPONSE', status: 200 })
    expect(finish.failure?.message).toContain('gzip')
    expect(server.requests[0]!.headers['accept-encoding']).toBe('identity')
  })
})

describe('credentials in the base URL', () => {
  it('never shows them in an error', async () => {
    const server = await serve([])
    await server.close()
    const secretURL = server.url.replace('http://', 'http://user:pass-secret@')
    const root = await bootAt(secretURL, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('TRANSPORT')
    expect(finish.failure?.message).not.toMatch(/secret/)
    expect(finish.failure?.message).toContain(`${server.url}/chat/completions`)
  })
})

describe('what the base URL holds besides the host', () => {
  it('sends its user and password as Basic auth when no key is set, and a key wins over them', async () => {
    const server = await serve([{ steps: [{ text: 'a' }] }, { steps: [{ text: 'b' }] }])
    const withUser = server.url.replace('http://', 'http://gate%40way:p%3Ass@')
    for (const [route, apiKeyEnv] of [['basic', false], ['bearer', 'REIN_TEST_OPENAI_KEY']] as const) {
      const root = await bootAt(withUser, { provider: route, apiKeyEnv })
      expect((await run(root, { provider: route })).finish.failure).toBeUndefined()
    }
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([`Basic ${Buffer.from('gate@way:p:ss').toString('base64')}`, `Bearer ${KEY}`])
  })

  it('sends a key changed in the environment from the next request on', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'a' }] }, { steps: [{ text: 'b' }] }])
    await run(root)
    process.env.REIN_TEST_OPENAI_KEY = 'sk-test-rotated-0123456789'
    await run(root)
    expect(server.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${KEY}`, 'Bearer sk-test-rotated-0123456789'])
  })

  it('refuses a user or password that is not valid percent-encoding when the plugin starts, without showing it', async () => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    const failure = await Promise.resolve(root.plugin(openai, { baseURL: 'http://user:50%off@127.0.0.1:9/v1', apiKeyEnv: false })).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID' })
    expect((failure as Error).message).toContain('%25')
    expect((failure as Error).message).not.toContain('50%off')
  })

  it('keeps its query on every request (?api-version=…) and never shows the query in a message', async () => {
    const { root, server } = await boot([{ steps: [{ text: 'ok' }] }, { kind: 'error', status: 404, message: 'nothing here' }], {}, { maxRetries: 0 })
    await root.plugin(openai, { provider: 'query', baseURL: `${server.url}?api-version=2024-10-21&key=query-secret`, apiKeyEnv: false })
    expect((await run(root, { provider: 'query' })).finish.failure).toBeUndefined()
    expect(server.requests[0]!.path).toBe('/v1/chat/completions?api-version=2024-10-21&key=query-secret')
    const { finish } = await run(root, { provider: 'query' })
    expect(finish.failure?.message).toContain(`${server.url}/chat/completions`)
    expect(finish.failure?.message).not.toContain('query-secret')
  })
})

describe('connection failures Node words in codes', () => {
  it('says there is no TLS when an https URL points at a plain http server', async () => {
    const server = await serve([])
    const url = server.url.replace('http://', 'https://')
    const root = await bootAt(url, { label: 'local' })
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('TRANSPORT')
    expect(finish.failure?.message).toMatch(new RegExp(`^could not reach local: no TLS on the server at ${url.replace(/[./]/g, '\\$&')}/chat/completions \\((ERR_SSL_WRONG_VERSION_NUMBER|EPROTO)\\); is it an http:// server\\?`))
  })

})

describe('credentials a server echoes', () => {
  /** A server that answers 401 quoting the credentials it was sent, as some gateways do. */
  async function echoing() {
    const server = createServer((request, response) => {
      request.resume()
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { message: `bad credentials: authorization=${String(request.headers.authorization)} api-key=${String(request.headers['api-key'])}` } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    return { url: `http://127.0.0.1:${port}/v1`, close: () => new Promise((resolve) => server.close(resolve)) }
  }

  it.each([
    ['the password of a baseURL with user:password@ (and its Basic token)', (url: string) => ({ baseURL: url.replace('http://', 'http://svc:Hunter2-Passw0rd@'), apiKeyEnv: false as const }), ['Hunter2-Passw0rd', Buffer.from('svc:Hunter2-Passw0rd').toString('base64')]],
    ['a secret-named header (Azure api-key)', (url: string) => ({ baseURL: url, apiKeyEnv: false as const, headers: { 'api-key': '0123456789abcdef0123456789abcdef' } }), ['0123456789abcdef0123456789abcdef']],
    ['an authorization header', (url: string) => ({ baseURL: url, apiKeyEnv: false as const, headers: { authorization: 'Token gw_live_q1w2e3r4t5y6' } }), ['gw_live_q1w2e3r4t5y6']],
  ])('never shows %s in the failure', async (_case, config, secrets) => {
    const server = await echoing()
    try {
      const root = new Context()
      await root.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
      await root.plugin(openai, config(server.url))
      const { finish } = await run(root)
      expect(finish.failure?.code).toBe('AUTH')
      for (const secret of secrets) expect(finish.failure?.message).not.toContain(secret)
    } finally {
      await server.close()
    }
  })
})

describe('headers HTTP cannot carry', () => {
  it.each([
    ['a value outside Latin-1 (an app name in Chinese)', { 'X-Title': '我的助手' }, 'the value of X-Title holds a character HTTP cannot carry'],
    ['a value with a line break', { 'x-api-key': 'sk-secret-VALUE\r\nx-evil: 1' }, 'the value of x-api-key holds a character HTTP cannot carry'],
    ['a name with a space', { 'X Title': 'ok' }, '"X Title" is not a header name HTTP allows'],
  ])('refuses %s when the plugin starts, naming the header, never its value, and sends nothing', async (_case, headers, words) => {
    const server = await serve([])
    const root = new Context()
    await root.plugin(LlmRuntime)
    const failure = await Promise.resolve(root.plugin(openai, { baseURL: server.url, apiKeyEnv: false, headers })).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID' })
    expect((failure as Error).message).toContain(words)
    expect((failure as Error).message).not.toMatch(/我|VALUE/)
    expect(server.requests).toEqual([])
  })
})

describe('base URL without a scheme', () => {
  it.each([
    ['localhost:8080/v1', 'http://localhost:8080/v1'],
    ['127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1'],
    ['api.example.com/v1', 'https://api.example.com/v1'],
    ['user@gateway.example.com/v1', 'https://user@gateway.example.com/v1'],
  ])('refuses %s when the plugin starts, naming the field, the value and the fix', async (baseURL, fix) => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    const failure = await Promise.resolve(root.plugin(openai, { baseURL, apiKeyEnv: false })).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID' })
    expect((failure as Error).message).toBe(`baseURL "${baseURL}" has no http:// or https:// scheme; write baseURL: ${fix}`)
    expect(root.llm.providers()).toEqual([])
  })

  it.each(['not a url', 'http://not a url', 'https://api.example .com/v1', '${GATEWAY_URL}', '$GATEWAY_URL/v1', '{{ gateway }}/v1'])('does not suggest another invalid URL for "%s" (a shell or template variable included): says it is not a URL and shows one', async (baseURL) => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    const failure = await Promise.resolve(root.plugin(openai, { baseURL, apiKeyEnv: false })).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID' })
    expect((failure as Error).message).toBe(`baseURL "${baseURL}" is not a URL; write the server's API root with its scheme, e.g. baseURL: http://localhost:8000/v1`)
  })

  it('refuses a schemeless URL given to the adapter directly, before any request', () => {
    expect(() => new openai.OpenAiCompatibleAdapter({ label: 'x', baseURL: 'localhost:8080/v1', apiKeyEnv: false, headers: {}, models: [], streamIdleTimeoutMs: 1000, maxTokensField: 'max_tokens' }))
      .toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: 'baseURL "localhost:8080/v1" has no http:// or https:// scheme; write baseURL: http://localhost:8080/v1' }))
  })
})

describe('apiKeyEnv', () => {
  const adapter = (apiKeyEnv: string | false) => new openai.OpenAiCompatibleAdapter({ label: 'x', baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv, headers: {}, models: [], streamIdleTimeoutMs: 1000, maxTokensField: 'max_tokens' })

  it.each([
    ['an OpenAI key', 'sk-proj-Zq81KxY2Lm0Np7AbCdEf'],
    ['a key whose characters would do for a name', 'gsk_Zq81KxY2Lm0Np7AbCdEf9GhIjKl3Mn4'],
  ])('refuses %s given to the adapter directly as apiKeyEnv, without quoting it', (_case, key) => {
    expect(() => adapter(key)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(/^apiKeyEnv must be the name of the environment variable/) }))
    expect(() => adapter(key)).not.toThrow('Zq81KxY2')
  })

  it('refuses an empty apiKeyEnv, which names no variable', () => {
    expect(() => adapter('')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }))
  })

  it('takes the names of environment variables, whatever their case', () => {
    for (const name of ['OPENAI_API_KEY', 'openai_key', '_KEY2', 'AZURE_OPENAI_API_KEY_2024_PRODUCTION', 'ACME2024PRODUCTION_KEY', 'MyService_ApiKey_2']) expect(adapter(name).options.apiKeyEnv).toBe(name)
  })
})

describe('endpoint', () => {
  it('tells where a route\'s requests go, without credentials', async () => {
    const { root, server } = await boot([], { label: 'Local vLLM' })
    expect(root.llm.endpoint('openai')).toEqual({ label: 'Local vLLM', baseURL: server.url, providerName: 'openai_compatible' })
    expect(root.llm.endpoint('nope')).toBeUndefined()
  })

  it('names what the server is for telemetry: by its host, or as configured', async () => {
    const { root } = await boot([], { providerName: 'vllm' })
    expect(root.llm.endpoint('openai')?.providerName).toBe('vllm')
    const { OpenAiCompatibleAdapter } = await import('../src/index.ts')
    const official = new OpenAiCompatibleAdapter({ label: 'OpenAI', baseURL: 'https://api.openai.com/v1', apiKeyEnv: false, headers: {}, models: [], streamIdleTimeoutMs: 1_000, maxTokensField: 'max_tokens' })
    expect(official.endpoint().providerName).toBe('openai')
  })

  it('never shows credentials written into the base URL', async () => {
    const { OpenAiCompatibleAdapter } = await import('../src/index.ts')
    const adapter = new OpenAiCompatibleAdapter({ label: 'gw', baseURL: 'https://user:pass-secret@gw.invalid/v1?api_key=key-secret', apiKeyEnv: false, headers: {}, models: [], streamIdleTimeoutMs: 1_000, maxTokensField: 'max_tokens' })
    expect(adapter.endpoint().baseURL).toBe('https://gw.invalid/v1')
  })
})
