// What a person sees, from the CLI (run from its sources, as every workspace package is here), of
// a memory.db rein cannot use: one warning per cause, not one per layer.
import { spawn } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startMockOpenAiServer, type MockReply, type MockScript, type MockServer, type RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { entry, openStore, tempRoot } from './temp-root.ts'

const CLI = fileURLToPath(new URL('../../../app/cli/src/bin.ts', import.meta.url))
// Absolute: the CLI runs in the test's project folder, which has no node_modules of its own.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

let server: MockServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

interface Project { dir: string; home: string; file: string }

/** A folder whose cordis.yml composes memory and memory-sqlite (on $REIN_HOME/memory.db) with a mock model. */
async function project(script: MockScript, memoryConfig = '{}'): Promise<Project> {
  server = await startMockOpenAiServer(script)
  const dir = await tempRoot()
  const home = join(dir, 'home')
  await mkdir(home)
  await writeFile(join(dir, 'cordis.yml'), [
    '- id: llm',
    "  name: '@rein/llm'",
    '- id: model',
    "  name: '@rein/llm-openai'",
    `  config: { provider: mock, label: mock, baseURL: '${server.url}', apiKeyEnv: false, models: [{ id: mock-model, contextWindow: 100000 }] }`,
    '- id: tools',
    "  name: '@rein/tools'",
    '- id: sessions',
    "  name: '@rein/session'",
    '- id: session-store',
    "  name: '@rein/session-jsonl'",
    '- id: memory',
    "  name: '@rein/memory'",
    `  config: ${memoryConfig}`,
    '- id: memory-store',
    "  name: '@rein/memory-sqlite'",
    '- id: agents',
    "  name: '@rein/agent'",
    '  config: { provider: mock, model: mock-model }',
    '',
  ].join('\n'))
  return { dir, home, file: join(home, 'memory.db') }
}

/** `rein <args>` as a real process, from the CLI's sources. */
function rein(p: Project, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, CLI, '--config', join(p.dir, 'cordis.yml'), ...args], {
      cwd: p.dir,
      env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1', REIN_HOME: p.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** How many times `text` says something about `file`. */
const mentions = (text: string, file: string) => text.split(file).length - 1

/** A memory.db with entries whose header is good and whose pages are not: it opens, then its first read fails. */
async function damagedAfterOpening(file: string): Promise<void> {
  const store = await openStore({ file })
  for (let index = 0; index < 200; index++) await store.insert(entry({ content: `entry ${index} `.repeat(20) }))
  await store.close()
  const bytes = await readFile(file)
  for (let index = 4096; index < bytes.length; index++) bytes[index] = (index * 31) & 0xff
  await writeFile(file, bytes)
}

const lastRole = (request: RecordedRequest) => ((request.body as { messages?: { role: string }[] }).messages ?? []).at(-1)?.role

// Each test starts the CLI from its sources once or twice: seconds each on a loaded machine. A wait, not a timing check.
describe('a memory.db rein cannot use, as the CLI tells it', { timeout: 60_000 }, () => {
  it('rein run says once that a memory.db which is not a database leaves memory off', async () => {
    const p = await project([{ steps: [{ text: 'ok' }] }])
    await writeFile(p.file, 'garbage\n')
    const run = await rein(p, ['run', 'hi'])
    expect(run).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect(run.stderr).toContain('memory is off for this run')
    expect(mentions(run.stderr, p.file)).toBe(1)
    // A command that is not about memory says it once too.
    const sessions = await rein(p, ['sessions'])
    expect(sessions.code).toBe(0)
    expect(mentions(sessions.stderr, p.file)).toBe(1)
  })

  it('rein memory list fails on a memory.db which is not a database, naming it once', async () => {
    const p = await project([{ steps: [{ text: 'unused' }] }])
    await writeFile(p.file, 'garbage\n')
    const list = await rein(p, ['memory', 'list'])
    expect(list.code).not.toBe(0)
    expect(mentions(list.stderr, p.file)).toBe(1)
  })

  it('rein run says once that the prompt block found memory.db damaged', async () => {
    const p = await project([{ steps: [{ text: 'ok' }] }])
    await damagedAfterOpening(p.file)
    const run = await rein(p, ['run', 'hi'])
    expect(run).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect(run.stderr).toContain('memory is off for this run')
    expect(mentions(run.stderr, p.file)).toBe(1)
  })

  it('rein run says once that a memory tool found memory.db damaged', async () => {
    // No block (maxEntries 0): the model's memory_search is the first read of the file.
    const searching = (request: RecordedRequest): MockReply => lastRole(request) === 'tool'
      ? { steps: [{ text: 'done' }] }
      : { steps: [{ toolCall: { id: 'search-1', name: 'memory_search', arguments: JSON.stringify({ query: 'entry' }) } }] }
    const p = await project(searching, '{ prompt: { maxEntries: 0 } }')
    await damagedAfterOpening(p.file)
    const run = await rein(p, ['run', 'hi'])
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
    expect(run.stderr).toContain('memory is off for this run')
    expect(mentions(run.stderr, p.file)).toBe(1)
  })
})
