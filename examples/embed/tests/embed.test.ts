// Runs embed.mjs as a real Node process against the mock server, the way its README says to.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startMockOpenAiServer, type MockScript, type MockServer } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const EMBED = fileURLToPath(new URL('../embed.mjs', import.meta.url))
// From the sources, like the rest of the suite: the rows resolve to src/ through the same condition.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

let server: MockServer | undefined
let home: string | undefined
afterEach(async () => {
  await server?.close()
  if (home) rmSync(home, { recursive: true, force: true })
  server = home = undefined
})

async function embed(script: MockScript, message: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  server = await startMockOpenAiServer(script)
  home = mkdtempSync(join(tmpdir(), 'rein-embed-'))
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(openai_|deepseek_|rein_)/i.test(key)))
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, EMBED, message], {
    cwd: home,
    env: { ...env, NODE_OPTIONS: '', OPENAI_BASE_URL: server.url, REIN_MODEL: 'mock-model', REIN_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

describe('examples/embed', () => {
  it('streams a turn in which the model calls a tool and reads its result', async () => {
    const run = await embed([
      { steps: [{ toolCall: { id: 'call_time', name: 'current_time', arguments: '{"timeZone":"Asia/Tokyo"}' } }] },
      { steps: [{ text: 'It is ' }, { text: 'evening in Tokyo.' }] },
    ], 'What time is it in Tokyo?')

    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toMatch(/^\[current_time\] running\n\[current_time\] done\nIt is evening in Tokyo\.\n\[completed\] session \S+: \d+ tokens in, \d+ out\n$/)
    const [first, second] = server?.requests.map((request) => request.body as { messages: { role: string; content?: unknown; tool_call_id?: string }[] }) ?? []
    expect(first?.messages.at(-1)).toEqual({ role: 'user', content: 'What time is it in Tokyo?' })
    const result = second?.messages.find((message) => message.role === 'tool')
    expect(result).toMatchObject({ tool_call_id: 'call_time', content: expect.stringContaining('Asia/Tokyo') })
    // The session was written where REIN_HOME says.
    expect(readdirSync(join(home ?? '', 'sessions')).filter((name) => name.endsWith('.jsonl'))).toHaveLength(1)
  })

  it('exits 1 and prints the code when the model request fails', async () => {
    const run = await embed([{ kind: 'error', status: 401, message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' }], 'Hello')

    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/\[error\] session \S+: 0 tokens in, 0 out\n$/)
    expect(run.stderr).toMatch(/^AUTH: /)
  })
})
