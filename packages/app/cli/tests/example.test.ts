/**
 * examples/cordis.yml is a complete agent: run as a user would — `rein --config examples/cordis.yml
 * run …` in a real process, its model at a mock server named by the environment — the clock tool
 * is called and its result reaches the model (issue #9 §6).
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockOpenAiServer, type MockServer } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnRein } from './harness.ts'

const EXAMPLE = fileURLToPath(new URL('../../../../examples/cordis.yml', import.meta.url))

let server: MockServer | undefined
let dir: string | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

interface WireMessage {
  role: string
  content: string | null
  tool_call_id?: string
}
interface WireBody {
  model: string
  messages: WireMessage[]
  tools?: { function: { name: string } }[]
}

describe('examples/cordis.yml', () => {
  it('runs a turn in which the model calls the clock tool and reads its result', async () => {
    server = await startMockOpenAiServer((_request, index) => index === 0
      ? { steps: [{ toolCall: { id: 'clock-1', name: 'current_time', arguments: '{"timeZone":"Asia/Tokyo"}' } }] }
      : { steps: [{ text: 'It is evening in Tokyo.' }] })
    dir = mkdtempSync(join(tmpdir(), 'rein-example-'))
    const before = readFileSync(EXAMPLE, 'utf8')
    const run = await spawnRein(dir, ['--config', EXAMPLE, 'run', 'what time is it'], undefined, {
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: 'sk-example-test-key',
      REIN_MODEL: 'mock-model',
      REIN_HOME: join(dir, 'home'),
    })
    expect(run.stderr).toContain('[tool] Check the time: Asia/Tokyo ok')
    expect(run).toMatchObject({ code: 0, stdout: 'It is evening in Tokyo.\n' })

    const [first, second] = server.requests
    expect(server.requests).toHaveLength(2)
    // The environment chose the server, the model and the key; the tool package reached the schema.
    expect(first?.headers.authorization).toBe('Bearer sk-example-test-key')
    const firstBody = first?.body as WireBody
    expect(firstBody.model).toBe('mock-model')
    // The clock beside the file, job, bash and memory tools the example composes.
    expect(firstBody.tools?.map((tool) => tool.function.name)).toEqual(['bash', 'current_time', 'edit', 'glob', 'grep', 'job_kill', 'job_list', 'job_output', 'memory_forget', 'memory_search', 'memory_update', 'memory_write', 'multi_edit', 'read', 'write'])
    // The tool ran, and what it returned is what the model read next.
    const result = (second?.body as WireBody | undefined)?.messages.find((message) => message.role === 'tool')
    expect(result?.tool_call_id).toBe('clock-1')
    expect(result?.content).toMatch(/\(Asia\/Tokyo, UTC\+09:00\); ISO \d{4}-\d\d-\d\dT/)
    // The session went to $REIN_HOME (memory.db only once a memory is saved), and the example file is as it was.
    expect(run.stderr).toMatch(/session [\w-]+/)
    expect(existsSync(join(dir, 'home', 'sessions'))).toBe(true)
    expect(readFileSync(EXAMPLE, 'utf8')).toBe(before)
  })
})
