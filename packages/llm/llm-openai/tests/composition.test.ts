// Loads the provider from a cordis.yml by package name and hot-swaps it by editing the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import { isReinError } from '@rein/base'
import { loadComposition, type Composition } from '@rein/compose'
import { userMessage, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockServer } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const servers: MockServer[] = []
let composition: Composition | undefined
let dir: string | undefined

afterEach(async () => {
  await composition?.dispose()
  await Promise.all(servers.splice(0).map((server) => server.close()))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

function yml(baseURL: string) {
  return [
    '- id: llm',
    "  name: '@rein/llm'",
    '- id: main-model',
    "  name: '@rein/llm-openai'",
    '  config:',
    '    provider: main',
    `    baseURL: ${baseURL}`,
    '    apiKeyEnv: false',
    '',
  ].join('\n')
}

async function ask(c: Composition) {
  const chunks: StreamChunk[] = []
  for await (const chunk of c.ctx.llm.stream({ provider: 'main', model: 'any', messages: [userMessage('hi')] })) chunks.push(chunk)
  return chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.type === 'text-delta' && chunk.text).join('')
}

describe('@rein/llm-openai in a cordis.yml', () => {
  it('serves its route, and a config edit swaps the server without a restart', async () => {
    const first = await startMockOpenAiServer(() => ({ steps: [{ text: 'from first' }] }))
    const second = await startMockOpenAiServer(() => ({ steps: [{ text: 'from second' }] }))
    servers.push(first, second)
    dir = mkdtempSync(join(tmpdir(), 'rein-openai-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml(first.url))
    composition = await loadComposition({ file, resolveFrom: packageDir })
    expect(composition.ctx.llm.providers()).toEqual(['main'])
    expect(await ask(composition)).toBe('from first')
    writeFileSync(file, yml(second.url))
    await composition.reload()
    expect(await ask(composition)).toBe('from second')
    expect([first.requests.length, second.requests.length]).toEqual([1, 1])
  })

  it('fails the load, naming the row and field, on a bad config value', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-openai-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml('http://127.0.0.1:1/v1').replace('apiKeyEnv: false', 'apiKeyEnv: 42'))
    await expect(loadComposition({ file, resolveFrom: packageDir })).rejects.toThrow('row "main-model" (@rein/llm-openai): config: apiKeyEnv must be the name of the environment variable')
  })

  // A key pasted where its variable's name belongs was printed in MISSING_CREDENTIAL on every
  // request, written to the session log, and shown by `rein config`.
  it.each([
    ['an OpenAI key', "'sk-proj-Zq81KxY2Lm0Np7AbCdEf'", 'Zq81KxY2Lm0Np7AbCdEf'],
    ['a key whose characters would do for a name (Groq\'s gsk_)', 'gsk_Zq81KxY2Lm0Np7AbCdEf9GhIjKl3Mn4', 'Zq81KxY2Lm0Np7AbCdEf'],
    ['a key of digits, which YAML reads as a number', '1234567890123456', '1234567890123456'],
    ['a Google key whose _ splits it into short runs', 'AIzaSyB1xQ_7kLm2Np3Rs4Tu5Vw_6XyZ8aBcD9eF', 'AIzaSyB1xQ'],
    ['a name with spaces', "'OPENAI API KEY'", 'OPENAI API KEY'],
  ])('refuses %s in apiKeyEnv at load, without quoting it', async (_case, written, secret) => {
    dir = mkdtempSync(join(tmpdir(), 'rein-openai-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml('http://127.0.0.1:1/v1').replace('apiKeyEnv: false', `apiKeyEnv: ${written}`))
    const error = await loadComposition({ file, resolveFrom: packageDir }).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error, 'CONFIG_INVALID')).toBe(true)
    expect(inspect(error, { depth: 10 })).not.toContain(secret)
    expect((error as Error).message).toMatch(/row "main-model" \(@rein\/llm-openai\): config: apiKeyEnv must be .*put the key in an environment variable and set apiKeyEnv to its name, e\.g\. apiKeyEnv: OPENAI_API_KEY/)
  })

  it('fails the load, with the fix, on a base URL that already ends with the path rein adds to every request', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-openai-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml('http://localhost:8080/v1/chat/completions/?api-version=2'))
    await expect(loadComposition({ file, resolveFrom: packageDir })).rejects.toThrow('baseURL "http://localhost:8080/v1/chat/completions/?api-version=***" ends with /chat/completions, which rein adds to every request; write baseURL: http://localhost:8080/v1?api-version=***')
  })

  it('fails the load, naming the field, the value and the fix, on a base URL without a scheme', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-openai-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml('localhost:8080/v1'))
    await expect(loadComposition({ file, resolveFrom: packageDir })).rejects.toThrow('baseURL "localhost:8080/v1" has no http:// or https:// scheme; write baseURL: http://localhost:8080/v1')
  })
})
