// Whatever a server sends back can echo the API key (a proxy quoting the rejected header, an
// upstream error passed through): no path from its bytes to an error message may carry the key.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MockReply } from '@rein/testkit'
import { boot, closeServers, run } from './harness.ts'

// Not shaped like `sk-…`: only the exact key, not the pattern, can remove it.
const KEY = 'Zq7plainSecret0123456789'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  delete process.env.REIN_TEST_OPENAI_KEY
  await closeServers()
})

const echoes: Array<[string, MockReply]> = [
  ['an error body', { kind: 'error', status: 401, message: `key ${KEY} rejected` }],
  ['a stream event that is not JSON', { steps: [{ raw: `data: ${KEY} rejected\n\n` }] }],
  ['an in-stream error event', { steps: [{ error: { message: `upstream rejected key ${KEY}` } }] }],
  ['a stream event of the wrong shape', { steps: [{ event: KEY }] }],
  ['a chunk field of the wrong type', { steps: [{ event: { choices: [{ index: 0, delta: { content: { text: KEY } } }] } }] }],
]

describe('an API key echoed by the server', () => {
  it.each(echoes)('in %s does not reach the error message', async (_, reply) => {
    const { root } = await boot([reply], {}, { maxRetries: 0 })
    const { finish, events } = await run(root)
    expect(finish.failure).toBeDefined()
    const text = JSON.stringify({ finish, events })
    expect(text).not.toContain(KEY)
    expect(text).not.toContain(KEY.slice(0, 16))
  })
})
