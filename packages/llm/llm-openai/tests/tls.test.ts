// https over real TLS on loopback, with a self-signed certificate made for these tests
// (fixtures/loopback-tls.*, for 127.0.0.1 and localhost, valid 2000–2100): trusted through NODE_EXTRA_CA_CERTS, as a user trusts a
// private CA, a stream is read (in a process of its own); not trusted, it is refused.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { bootAt, run } from './harness.ts'

const certFile = fileURLToPath(new URL('./fixtures/loopback-tls.crt', import.meta.url))
const key = readFileSync(new URL('./fixtures/loopback-tls.key', import.meta.url))
const cert = readFileSync(certFile)
const streamOnce = fileURLToPath(new URL('./fixtures/stream-once.ts', import.meta.url))
const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const STREAM = `${chunk({ role: 'assistant', content: 'over tls' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server ? server.close(resolve) : resolve(undefined))
  server = undefined
})

async function serveTls(): Promise<string> {
  server = createServer({ key, cert }, (request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream' }).end(STREAM))
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `https://127.0.0.1:${(server!.address() as AddressInfo).port}/v1`
}

describe('https', () => {
  it('streams an answer from a server whose certificate the process trusts (NODE_EXTRA_CA_CERTS)', { timeout: 60_000 }, async () => {
    const url = await serveTls()
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', streamOnce, url], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: certFile }, stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (part: Buffer) => { out += part.toString() })
    // 'close', not 'exit': only then has all of its stdout been read.
    expect(await new Promise((resolve) => child.once('close', resolve))).toBe(0)
    expect(JSON.parse(out)).toMatchObject({ blocks: [{ type: 'text', text: 'over tls' }], finish: { type: 'finish', reason: 'stop' } })
  })

  it('refuses a server whose certificate is not trusted: TRANSPORT, in plain words', async () => {
    const url = await serveTls()
    const { finish } = await run(await bootAt(url, { label: 'tls' }))
    expect(finish.failure).toEqual({ code: 'TRANSPORT', message: `could not reach tls: untrusted self-signed TLS certificate at ${url}/chat/completions (DEPTH_ZERO_SELF_SIGNED_CERT)` })
  })
})
