// Loads the DeepSeek provider by package name from a cordis.yml, as a user's project would.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import { loadComposition } from '@rein/compose'
import { userMessage, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer } from '@rein/testkit'
import { describe, expect, it } from 'vitest'

const packageDir = fileURLToPath(new URL('..', import.meta.url))

describe('@rein/llm-deepseek in a cordis.yml', () => {
  it('serves the deepseek route with its key from the environment, and leaves when disposed', async () => {
    const server = await startMockOpenAiServer([{ dialect: 'deepseek', steps: [{ reasoning: 'Hm.' }, { text: 'Hello from DeepSeek.' }] }])
    const dir = mkdtempSync(join(tmpdir(), 'rein-deepseek-yml-'))
    process.env.REIN_TEST_DS_KEY = 'sk-yml-0123456789'
    try {
      const file = join(dir, 'cordis.yml')
      writeFileSync(file, [
        "- { id: llm, name: '@rein/llm' }",
        `- { id: deepseek, name: '@rein/llm-deepseek', config: { baseURL: '${server.url}', apiKeyEnv: REIN_TEST_DS_KEY } }`,
        '',
      ].join('\n'))
      const composition = await loadComposition({ file, resolveFrom: packageDir })
      const chunks: StreamChunk[] = []
      for await (const chunk of composition.ctx.llm.stream({ provider: 'deepseek', model: 'deepseek-v4-flash', messages: [userMessage('hi')] })) chunks.push(chunk)
      expect(chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => chunk.type === 'text-delta' && chunk.text)).toEqual(['Hello from DeepSeek.'])
      expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-yml-0123456789')
      expect(server.requests[0]!.body).toMatchObject({ model: 'deepseek-v4-flash', thinking: { type: 'enabled' }, reasoning_effort: 'high' })
      expect(composition.ctx.llm.providers()).toEqual(['deepseek'])
      await composition.dispose()
      expect(composition.ctx.llm?.providers() ?? []).toEqual([])
    } finally {
      delete process.env.REIN_TEST_DS_KEY
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
  // The schema is @rein/llm-openai's; this checks the DeepSeek row refuses a pasted key too, and names its own variable.
  it('refuses a key pasted into apiKeyEnv at load, without quoting it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rein-deepseek-yml-'))
    try {
      const file = join(dir, 'cordis.yml')
      writeFileSync(file, ["- { id: llm, name: '@rein/llm' }", "- { id: deepseek, name: '@rein/llm-deepseek', config: { apiKeyEnv: sk-0123456789abcdef0123456789abcdef } }", ''].join('\n'))
      const error = await loadComposition({ file, resolveFrom: packageDir }).then(() => undefined, (caught: unknown) => caught)
      expect(inspect(error, { depth: 10 })).not.toContain('0123456789abcdef')
      expect((error as Error).message).toMatch(/row "deepseek" \(@rein\/llm-deepseek\): config: apiKeyEnv must be .*e\.g\. apiKeyEnv: DEEPSEEK_API_KEY/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
