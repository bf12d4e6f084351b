// A key put in the base URL's path (`https://gateway.example/v1/key/<k>/`, `/sk-…/`), as some
// gateways take it, must not reach an error message, the route notice nor telemetry's server: the
// message names the host and the rest of the path, the key as `***`. Real HTTP on loopback.
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@rein/llm'
import { closedLoopbackUrl } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import * as openai from '../src/index.ts'
import { bootAt, run } from './harness.ts'

// Not shaped like any known key: only its place after `key/` tells it is one.
const PLAIN = 'Zq7plainPathSecret0123'
const SK = 'sk-live-abcdefghijklmnopqrstuvwxyz012345'
const PATHS: Array<[string, string, string]> = [
  ['a plain key after a key/ segment', `/v1/key/${PLAIN}`, '/v1/key/***'],
  ['an sk- key as a segment', `/gw/${SK}/v1`, '/gw/***/v1'],
]

const closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

/** A loopback server answering every request with `answer`. */
async function answering(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    answer(response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function expectHidden(text: string | undefined, shownPath: string, origin: string) {
  expect(text).toBeDefined()
  expect(text).not.toContain(PLAIN)
  expect(text).not.toContain(SK.slice(0, 16))
  expect(text).toContain(`${origin}${shownPath}`)
}

describe('a key in the base URL\'s path', () => {
  it.each(PATHS)('is masked when the server cannot be reached (%s)', async (_case, path, shown) => {
    const origin = await closedLoopbackUrl()
    const root = await bootAt(`${origin}${path}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('TRANSPORT')
    expectHidden(finish.failure?.message, `${shown}/chat/completions`, origin)
  })

  it.each(PATHS)('is masked in the 404 hint to check baseURL (%s)', async (_case, path, shown) => {
    const origin = await answering((response) => response.writeHead(404, { 'content-type': 'text/plain' }).end('no such route'))
    const root = await bootAt(`${origin}${path}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.status).toBe(404)
    expectHidden(finish.failure?.message, `${shown}/chat/completions`, origin)
  })

  it.each(PATHS)('is masked when the answer is no event stream, which names the base URL (%s)', async (_case, path, shown) => {
    const origin = await answering((response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'))
    const root = await bootAt(`${origin}${path}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.code).toBe('MALFORMED_RESPONSE')
    expectHidden(finish.failure?.message, shown, origin)
  })

  it.each(PATHS)('is masked where a redirect points (%s)', async (_case, path, shown) => {
    const origin = await answering((response) => response.writeHead(308, { location: `https://other.example${path}/chat/completions` }).end())
    const root = await bootAt(`${origin}/v1`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.status).toBe(308)
    expectHidden(finish.failure?.message, `${shown}/chat/completions`, 'https://other.example')
  })

  it.each(PATHS)('is masked in the endpoint the route notice and telemetry read (%s)', async (_case, path, shown) => {
    const root = await bootAt(`https://gateway.example${path}/`, { label: 'gw' })
    const endpoint = root.llm.endpoint('openai')
    expect(endpoint?.baseURL).toBe(`https://gateway.example${shown}/`)
  })
})

// Keys in the base URL a server quotes back: Express's default 404 is `Cannot POST <req.url>`, the
// path with its query. Not shaped like any known key, nor (sig) named like a secret.
const QUERY_KEY = 'Wq5plainQuerySecret789'
const SAS_SIG = 'Vb3plainSignature4567'

describe('a key in the base URL that the server echoes', () => {
  it('is masked in a 404 whose body quotes the request path and query (Cannot POST <url>)', async () => {
    const origin = await answeringWith((url, response) => response.writeHead(404, { 'content-type': 'text/html' }).end(`<pre>Cannot POST ${url}</pre>`))
    const root = await bootAt(`${origin}/v1/key/${PLAIN}?api_key=${QUERY_KEY}&sig=${SAS_SIG}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.status).toBe(404)
    const message = finish.failure?.message ?? ''
    for (const secret of [PLAIN, QUERY_KEY, SAS_SIG]) expect(message).not.toContain(secret)
    expect(message).toContain('Cannot POST /v1/key/')
    expect(message).toContain(`(nothing at ${origin}/v1/key/***/chat/completions? check baseURL)`)
  })

  it('is masked when the server echoes a percent-encoded query value in its reason phrase', async () => {
    const origin = await answeringWith((url, response) => response.writeHead(400, `Bad request ${url}`, { 'content-type': 'text/plain' }).end(`bad: ${decodeURIComponent(url)}`))
    const root = await bootAt(`${origin}/v1?sig=${SAS_SIG}%2Fx%3D&api_key=${QUERY_KEY}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.status).toBe(400)
    const message = finish.failure?.message ?? ''
    for (const secret of [QUERY_KEY, SAS_SIG]) expect(message).not.toContain(secret)
  })

  it('is masked where a redirect points, when the location puts the key where no name says it is one', async () => {
    const origin = await answeringWith((_url, response) => response.writeHead(307, { location: `/accounts/${PLAIN}/moved?to=${QUERY_KEY}` }).end())
    const root = await bootAt(`${origin}/v1/key/${PLAIN}?api_key=${QUERY_KEY}`, { label: 'gw' })
    const { finish } = await run(root)
    expect(finish.failure?.status).toBe(307)
    const message = finish.failure?.message ?? ''
    for (const secret of [PLAIN, QUERY_KEY]) expect(message).not.toContain(secret)
    expect(message).toContain(`(redirected to ${origin}/accounts/`)
  })
})

/** A loopback server answering every request with `answer`, given the request's path and query as sent. */
async function answeringWith(answer: (url: string, response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume()
    answer(request.url ?? '', response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('a key in a base URL the plugin refuses', () => {
  it.each([
    ['no scheme, a key in the path', `gateway.example/v1/key/${PLAIN}/`, 'https://gateway.example/v1/key/***/'],
    ['no scheme, an sk- key in the path', `gateway.example/${SK}/v1`, 'https://gateway.example/***/v1'],
    ['no scheme, a password before the host', `svc:${PLAIN}@gateway.example/v1`, 'baseURL "svc:***@gateway.example/v1" has no http:// or https:// scheme; write baseURL: https://svc:***@gateway.example/v1'],
    ['another scheme', `ftp://svc:${PLAIN}@gateway.example/key/${PLAIN}?api_key=${PLAIN}`, 'ftp://svc:***@gateway.example/key/***?api_key=***'],
    ['no scheme, a signature in a query parameter no name calls a secret (sig)', `gateway.example/v1?api-version=2024-06-01&sig=${PLAIN}`, 'https://gateway.example/v1?api-version=***&sig=***'],
    ['another scheme, a bare query value', `ftp://gateway.example/v1?${PLAIN}`, 'ftp://gateway.example/v1?***'],
  ])('is not quoted in CONFIG_INVALID (%s)', async (_case, baseURL, shown) => {
    const root = new Context()
    await root.plugin(LlmRuntime)
    const failure = await Promise.resolve(root.plugin(openai, { baseURL, apiKeyEnv: false })).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID' })
    const { message } = failure as Error
    expect(message).not.toContain(PLAIN)
    expect(message).not.toContain(SK.slice(0, 16))
    expect(message).toContain(shown)
  })
})
