// A row without `label` names its server by the base URL's host; "OpenAI" is for OpenAI's own API.
import { afterEach, describe, expect, it } from 'vitest'
import { Config } from '../src/index.ts'
import { bootAt, boot, closeServers, run } from './harness.ts'

afterEach(closeServers)

describe('the label a row without one gets', () => {
  it('is the host of a local base URL, not OpenAI', () => {
    expect(Config({ baseURL: 'http://127.0.0.1:9/v1' }).label).toBe('127.0.0.1:9')
    expect(Config({ baseURL: 'http://localhost:11434/v1' }).label).toBe('localhost:11434')
    expect(Config({ baseURL: 'https://openrouter.ai/api/v1' }).label).toBe('openrouter.ai')
  })

  it('is OpenAI for OpenAI\'s own API host, and for no base URL', () => {
    expect(Config({}).label).toBe('OpenAI')
    expect(Config({ baseURL: 'https://api.openai.com/v1/' }).label).toBe('OpenAI')
  })

  it('is the host with a key-shaped label masked, so messages do not open with a key', () => {
    const key = 'sk-live-abcdefghijklmnopqrstuvwxyz012345'
    const label = Config({ baseURL: `https://${key}.gw.example/v1` }).label
    expect(label).not.toContain(key.slice(0, 16))
    expect(label).toBe('***.gw.example')
  })

  it('is the one given when given', () => {
    expect(Config({ baseURL: 'http://127.0.0.1:9/v1', label: 'Ollama' }).label).toBe('Ollama')
    expect(Config({ label: 'Work OpenAI' }).label).toBe('Work OpenAI')
  })
})

describe('errors from a local server', () => {
  it('say its host when the server cannot be reached', async () => {
    const root = await bootAt('http://127.0.0.1:9/v1')
    const { finish } = await run(root)
    expect(finish.failure?.message).toContain('could not reach 127.0.0.1:9:')
    expect(finish.failure?.message).not.toContain('OpenAI')
  })

  it('say its host when it answers 401', async () => {
    const { root, server } = await boot([{ kind: 'error', status: 401, message: 'Incorrect API key provided' }], { apiKeyEnv: false, label: undefined }, { maxRetries: 0 })
    const { finish } = await run(root)
    expect(finish.failure?.message).toMatch(new RegExp(`^${new URL(server.url).host} returned HTTP 401`))
  })
})
