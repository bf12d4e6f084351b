// A temp project for CLI tests: a cordis.yml against a mock server, node_modules linked so names resolve.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { EventEmitter } from 'node:events'
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { createRequire } from 'node:module'
import type { Readable } from 'node:stream'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startMockOpenAiServer, type MockScript, type MockServer } from '@rein/testkit'
import { expect } from 'vitest'
import { main, type Io } from '../src/index.ts'

export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url))
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url))
/**
 * REIN_HOME for a run that names none: a folder that does not exist, so no developer's
 * ~/.rein/cordis.yml (or sessions) ever reaches a test.
 */
export const NO_HOME = join(tmpdir(), `rein-cli-tests-no-home-${process.pid}`)

export interface Project {
  dir: string
  home: string
  server: MockServer
  cleanup(): Promise<void>
}

/** A project folder whose cordis.yml loads the stack with llm-openai pointed at a mock server. */
export async function project(script: MockScript, options: { agent?: Record<string, unknown>; extraRows?: string[]; pricing?: boolean; contextWindow?: number } = {}): Promise<Project> {
  const server = await startMockOpenAiServer(script)
  const dir = mkdtempSync(join(tmpdir(), 'rein-cli-'))
  const home = join(dir, '.rein')
  // As if the packages were installed in this project.
  symlinkSync(join(PACKAGE_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir')
  const agent = { provider: 'mock', model: 'mock-model', ...options.agent }
  const yml = [
    '- id: llm',
    "  name: '@rein/llm'",
    '  config: { retry: { maxRetries: 1, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }',
    '- id: model',
    "  name: '@rein/llm-openai'",
    `  config: { provider: mock, label: mock, baseURL: '${server.url}', apiKeyEnv: false${modelsRow(options)} }`,
    '- id: tools',
    "  name: '@rein/tools'",
    '- id: sessions',
    "  name: '@rein/session'",
    '- id: store',
    "  name: '@rein/session-jsonl'",
    `  config: { root: '${join(home, 'sessions')}' }`,
    '- id: agents',
    "  name: '@rein/agent'",
    `  config: ${JSON.stringify(agent)}`,
    '- id: test-tools',
    `  name: '${join(FIXTURES, 'test-tools.ts')}'`,
    `  config: { dir: '${dir}' }`,
    ...(options.extraRows ?? []),
    '',
  ].join('\n')
  writeFileSync(join(dir, 'cordis.yml'), yml)
  // The same composition with no session root: sessions go where REIN_HOME says.
  writeFileSync(join(dir, 'no-root.yml'), yml.replace(`  config: { root: '${join(home, 'sessions')}' }\n`, ''))
  return {
    dir,
    home,
    server,
    cleanup: async () => {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The llm-openai row's `models`, when a test prices the model or gives it a context window. */
function modelsRow(options: { pricing?: boolean; contextWindow?: number }): string {
  if (!options.pricing && options.contextWindow === undefined) return ''
  const pricing = options.pricing ? ', pricing: { input: 2, output: 8, cacheRead: 0.5 }' : ''
  const window = options.contextWindow === undefined ? '' : `, contextWindow: ${options.contextWindow}`
  return `, models: [{ id: mock-model${window}${pricing} }]`
}

/**
 * One project per test, cleaned up after it: `const setUp = projectPerTest(afterEach)`, then
 * `const p = await setUp(script, options)` inside the test.
 */
export function projectPerTest(afterEach: (hook: () => Promise<void>) => void) {
  let current: Project | undefined
  afterEach(async () => {
    await current?.cleanup()
    current = undefined
  })
  return async (...args: Parameters<typeof project>): Promise<Project> => {
    current = await project(...args)
    return current
  }
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `rein` in-process with captured streams; `signals` lets a test send SIGINT. */
export async function rein(cwd: string, argv: string[], options: { signals?: EventEmitter; env?: NodeJS.ProcessEnv; onStdout?: (text: string) => void; onStderr?: (text: string) => void; stdin?: string } = {}): Promise<Run> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString()
    options.onStdout?.(out)
  })
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString()
    options.onStderr?.(err)
  })
  const io: Io = {
    stdout,
    stderr,
    stdin: options.stdin === undefined ? new PassThrough() : new PassThrough().end(options.stdin),
    env: { REIN_HOME: NO_HOME, ...options.env, NO_COLOR: '1' },
    cwd,
    signals: (options.signals ?? new EventEmitter()) as unknown as Io['signals'],
  }
  const code = await main(argv, io)
  return { code, stdout: out, stderr: err }
}

/** `rein chat` on a pretend terminal: the test types into stdin and reads what the prompt shows. */
export function chatTerminal(cwd: string, argv: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} })
  const stdout = new PassThrough()
  const stderr = Object.assign(new PassThrough(), { isTTY: true, columns: 80 })
  let screen = ''
  let answer = ''
  stderr.on('data', (chunk: Buffer) => { screen += chunk.toString() })
  stdout.on('data', (chunk: Buffer) => { answer += chunk.toString() })
  const io: Io = { stdin, stdout, stderr, env: { NO_COLOR: '1', REIN_HOME: NO_HOME, ...env }, cwd, signals: new EventEmitter() as unknown as Io['signals'] }
  const prompts = () => screen.split('> ').length - 1
  return {
    done: main(['chat', ...argv], io),
    type: (text: string) => stdin.write(text),
    screen: () => screen,
    answer: () => answer,
    /** Types `line`, waits for `reply` in the answer and for the next prompt (so the next line is a new turn, not a queued one). */
    turn: async (line: string, reply: string) => {
      // The chat's first prompt first: a line typed before it would count it as the turn's.
      await expect.poll(prompts).toBeGreaterThan(0)
      const before = prompts()
      stdin.write(`${line}\r`)
      await expect.poll(() => answer).toContain(reply)
      await expect.poll(prompts).toBe(before + 1)
    },
  }
}

/** What a terminal shows of `text`: a line readline erases to redraw it (`ESC[1G ESC[0J`) is gone; other cursor moves are dropped. */
export function shownText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\n]*\u001b\[1G\u001b\[0J/g, '').replace(/\u001b\[\d*[A-Za-z]/g, '')
}

export function sessionIdOf(run: Pick<Run, 'stderr'>): string {
  const match = /session (\S+)/.exec(run.stderr)
  if (!match) throw new Error(`no session id in: ${run.stderr}`)
  return match[1]!
}

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
const BIN = join(PACKAGE_DIR, 'src', 'bin.ts')

export interface Child { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/**
 * Runs `rein` as a real process from its sources. `onStdout` sees the output so far and the child,
 * to kill it or close its stdout at a chosen moment. `nodeArgs` go to Node before the script.
 */
export function spawnRein(cwd: string, args: string[], onStdout?: (text: string, kill: () => void, child: ChildProcessByStdio<null, Readable, Readable>) => void, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = [], onSpawn?: (child: ChildProcessByStdio<null, Readable, Readable>) => void): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, ...nodeArgs, BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '', REIN_HOME: NO_HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    onSpawn?.(child)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      onStdout?.(stdout, () => child.kill('SIGKILL'), child)
    })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

/** `part` quoted for a POSIX shell. */
export const shellQuote = (part: string) => `'${part.replaceAll("'", "'\\''")}'`

/** The shell words that run `rein` from its sources with `args`. */
export function reinCommand(args: readonly string[]): string {
  return [process.execPath, '--conditions=@rein/source', '--import', TSX, BIN, ...args].map(shellQuote).join(' ')
}

/**
 * `rein` as a real process on a real terminal (`script` gives it a pty), from its sources: what
 * only a whole process shows, such as how it exits once nothing else can happen. The test types
 * into the terminal and reads everything it shows (stdout and stderr together).
 */
export function terminalRein(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return onTerminal(cwd, reinCommand(args), env)
}

/** A shell command on a real terminal (`script` gives it a pty); `done` resolves with `script`'s exit code. */
export function onTerminal(cwd: string, command: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '', REIN_HOME: NO_HOME, TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let screen = ''
  child.stdout.on('data', (chunk: Buffer) => { screen += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { screen += chunk.toString() })
  return {
    type: (text: string) => child.stdin.write(text),
    screen: () => screen,
    done: new Promise<number | null>((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (code) => resolve(code))
    }),
    kill: () => child.kill('SIGKILL'),
  }
}
