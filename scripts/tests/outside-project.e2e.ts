// What a user gets once the packages are published: a project outside this repository installs
// them with npm (here the tarballs `pnpm pack:all` made), adds a tool package written in plain
// JavaScript, names them in its own cordis.yml, and runs `npx rein run` against a scripted model.
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PACKED = join(ROOT, 'dist-packages')

/** What this test uses of the installed @rein/testkit (its types are not visible from here). */
interface MockServer {
  url: string
  requests: readonly { body: unknown }[]
  close(): Promise<void>
}
interface Testkit {
  startMockOpenAiServer(script: readonly object[]): Promise<MockServer>
}

/** The content of the last tool message of a recorded request. */
function lastToolResult(body: unknown): string {
  const messages = (body as { messages?: { role: string; content?: unknown }[] }).messages ?? []
  return JSON.stringify(messages.filter((message) => message.role === 'tool').at(-1)?.content ?? null)
}

interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a command to its end (killed after `timeoutMs`). The variables of the npm or pnpm running
 * this test, and any that would point rein at a real model or folder, are left out.
 */
function exec(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Exit> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_|openai_|deepseek_|rein_)/i.test(key)))
  return new Promise((resolve, reject) => {
    // No NODE_OPTIONS either: `--conditions=@rein/source` would point the packages at src/, which is not packed.
    const child = spawn(command, args, { cwd: options.cwd, env: { ...inherited, NODE_OPTIONS: '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

function succeeded(what: string, exit: Exit) {
  if (exit.code !== 0) throw new Error(`${what} exited with ${exit.code}:\n${exit.stdout}\n${exit.stderr}`)
}

/** A third-party tool package as someone would publish it: plain JavaScript, no build step. */
function writeToolPackage(dir: string) {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name: 'rein-tool-shout',
    version: '1.0.0',
    type: 'module',
    exports: './index.js',
    dependencies: { '@rein/tools': '^0.1.0' },
  }, null, 2))
  writeFileSync(join(dir, 'index.js'), `import { defineTool } from '@rein/tools'

export default {
  name: 'rein-tool-shout',
  inject: ['tools'],
  apply(ctx) {
    ctx.tools.register(defineTool({
      name: 'shout',
      description: 'Returns the text in capitals, with an exclamation mark.',
      parameters: { text: { type: 'string', required: true, description: 'what to shout' } },
      output: {
        schema: { type: 'object', additionalProperties: false, properties: { shouted: { type: 'string', required: true } } },
        render: (_args, value) => value.shouted,
      },
      execute: (args) => ({ shouted: args.text.toUpperCase() + '!' }),
    }))
  },
}
`)
}

/** An OTLP/HTTP endpoint that keeps what it is sent: path and body of each export. */
async function startCapture(): Promise<{ url: string; exports: { path: string; body: string }[]; server: Server }> {
  const exports: { path: string; body: string }[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => { body += chunk.toString() })
    request.on('end', () => {
      exports.push({ path: request.url ?? '', body })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports, server }
}

function composition(server: MockServer, sessions: string, otlp: string): string {
  return `# A user's own composition: every row names an npm package installed beside this file.
- id: llm
  name: '@rein/llm'
- id: openai
  name: '@rein/llm-openai'
  config:
    baseURL: '${server.url}'
    apiKeyEnv: false
- id: tools
  name: '@rein/tools'
- id: sessions
  name: '@rein/session'
- id: store
  name: '@rein/session-jsonl'
  config:
    root: '${sessions}'
- id: agents
  name: '@rein/agent'
  config:
    provider: openai
    model: mock-model
- id: shout
  name: rein-tool-shout
- id: telemetry
  name: '@rein/telemetry'
- id: otel
  name: '@rein/otel-http'
  config:
    endpoint: '${otlp}'
`
}

describe('a project outside this repository', () => {
  let work: string
  let project: string
  let sessions: string
  let home: string
  let server: MockServer
  let capture: Awaited<ReturnType<typeof startCapture>>
  let testkit: Testkit

  beforeAll(async () => {
    const tarballs = existsSync(PACKED) ? readdirSync(PACKED).filter((name) => name.endsWith('.tgz')) : []
    if (tarballs.length === 0) throw new Error(`no tarballs in ${PACKED}; run \`pnpm build && pnpm pack:all\` first`)

    work = mkdtempSync(join(tmpdir(), 'rein-outside-'))
    // Everything below lives in the temporary folder: nothing is written to the repository.
    if (!relative(ROOT, work).startsWith('..')) throw new Error(`the temporary folder ${work} is inside the repository; set TMPDIR elsewhere`)
    const tool = join(work, 'rein-tool-shout')
    project = join(work, 'project')
    sessions = join(work, 'sessions')
    home = join(work, 'rein-home')
    for (const dir of [tool, project, home]) mkdirSync(dir)

    writeToolPackage(tool)
    succeeded('npm pack', await exec('npm', ['pack', '--pack-destination', work], { cwd: tool, timeoutMs: 60_000 }))

    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }, null, 2))
    succeeded('npm install', await exec('npm', [
      'install', '--no-audit', '--no-fund', '--prefer-offline',
      ...tarballs.map((name) => join(PACKED, name)), join(work, 'rein-tool-shout-1.0.0.tgz'),
      // @rein/memory-sqlite's better-sqlite3 compiles where no prebuilt binary can be fetched (1–2 min).
    ], { cwd: project, timeoutMs: 420_000 }))

    testkit = await import(pathToFileURL(join(project, 'node_modules/@rein/testkit/dist/index.mjs')).href) as Testkit
    server = await testkit.startMockOpenAiServer([
      { steps: [{ toolCall: { id: 'call_shout', name: 'shout', arguments: '{"text":"outside"}' } }] },
      { steps: [{ text: 'The tool shouted OUTSIDE!' }] },
    ])
    capture = await startCapture()
    writeFileSync(join(project, 'cordis.yml'), composition(server, sessions, capture.url))
  }, 520_000)

  afterAll(async () => {
    await server?.close()
    capture?.server.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('installs every rein package from the tarballs, none from the registry', () => {
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> }
    const rein = Object.entries(lock.packages).filter(([path]) => /(^|\/)node_modules\/@rein\//.test(path))
    expect(rein).toHaveLength(readdirSync(PACKED).filter((name) => name.endsWith('.tgz')).length)
    expect(rein.filter(([, entry]) => !/^file:.*\.tgz$/.test(entry.resolved ?? ''))).toEqual([])
  })

  it('runs `npx rein run` with the JavaScript tool, and the tool result reaches the model', async () => {
    const result = await exec('npx', ['--no', 'rein', 'run', 'Shout the word outside'], {
      cwd: project,
      timeoutMs: 60_000,
      // HOME too, to show nothing is written under it (no ~/.rein); npm then lacks the user's .npmrc.
      env: { REIN_HOME: home, HOME: home, NO_COLOR: '1', npm_config_update_notifier: 'false' },
    })
    expect(result).toMatchObject({ code: 0 })
    expect(result.stdout).toContain('The tool shouted OUTSIDE!')

    expect(server.requests).toHaveLength(2)
    const [first, second] = server.requests.map((request) => request.body as { tools?: { function: { name: string } }[]; messages?: { role: string; tool_call_id?: string; content?: unknown }[] })
    expect(first?.tools?.map((tool) => tool.function.name)).toContain('shout')
    expect(second?.messages).toContainEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_shout', content: 'OUTSIDE!' }))

    // The session went where the project's cordis.yml says, and nothing under the home folder.
    expect(readdirSync(sessions).filter((name) => name.endsWith('.jsonl'))).toHaveLength(1)
    expect(existsSync(join(home, '.rein'))).toBe(false)

    // otel-http, whose OpenTelemetry SDK is bundled into its dist, exported the run before the exit.
    const traces = capture.exports.filter((entry) => entry.path === '/v1/traces').map((entry) => entry.body).join('')
    expect(traces).toContain('invoke_agent')
    expect(traces).toContain('execute_tool shout')
    expect(capture.exports.some((entry) => entry.path === '/v1/metrics' && entry.body.includes('gen_ai.client.operation.duration'))).toBe(true)
  })

  // tool-fs as built: diff inlined into its dist, tinyglobby imported and ignore required late.
  it('runs tool-fs from its package: glob honours .gitignore, and an edit reports the changed part', async () => {
    mkdirSync(join(project, 'notes'))
    mkdirSync(join(project, 'build'))
    writeFileSync(join(project, 'notes/a.txt'), 'alpha\n')
    writeFileSync(join(project, 'build/out.txt'), 'built\n')
    writeFileSync(join(project, '.gitignore'), 'build/\nnode_modules/\n')
    const model = await testkit.startMockOpenAiServer([
      { steps: [{ toolCall: { id: 'call_glob', name: 'glob', arguments: '{"pattern":"**/*.txt"}' } }] },
      { steps: [{ toolCall: { id: 'call_read', name: 'read', arguments: '{"path":"notes/a.txt"}' } }] },
      { steps: [{ toolCall: { id: 'call_edit', name: 'edit', arguments: '{"path":"notes/a.txt","old_string":"alpha","new_string":"beta"}' } }] },
      { steps: [{ text: 'Edited.' }] },
    ])
    try {
      writeFileSync(join(project, 'fs.yml'), composition(model, sessions, capture.url).replace('- id: shout', "- id: fs\n  name: '@rein/tool-fs'\n- id: shout"))
      const result = await exec('npx', ['--no', '--', 'rein', 'run', '--config', 'fs.yml', '--allow', 'write', 'Find the text files and change alpha to beta'], {
        cwd: project,
        timeoutMs: 60_000,
        env: { REIN_HOME: home, HOME: home, NO_COLOR: '1', npm_config_update_notifier: 'false' },
      })
      succeeded('rein run with tool-fs', result)
      expect(model.requests).toHaveLength(4)
      const found = lastToolResult(model.requests[1]?.body)
      expect(found).toContain('notes/a.txt')
      expect(found).not.toContain('build/out.txt')
      expect(lastToolResult(model.requests[3]?.body)).toContain('now reads')
      expect(readFileSync(join(project, 'notes/a.txt'), 'utf8')).toBe('beta\n')
    } finally {
      await model.close()
    }
  })
})
