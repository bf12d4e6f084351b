/**
 * A leak-suite composition (every store and tool rein ships, telemetry exported to a local OTLP
 * endpoint) and `rein` run as a real process from its sources. The spawn is the few lines of
 * `spawnRein` in packages/app/cli/tests/harness.ts, with an environment built from nothing, so
 * only what the suite sets reaches rein.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
const BIN = fileURLToPath(new URL('../../../packages/app/cli/src/bin.ts', import.meta.url))

/** The variable llm-openai reads the key from. */
export const KEY_ENV = 'REIN_LEAK_API_KEY'

/** What differs between the suite's compositions. */
export interface CompositionOptions {
  /** The mock provider's base URL (with `/v1`). */
  baseURL: string
  /** The OTLP endpoint. */
  otlp: string
  captureContent: boolean
  /** The agent's system prompt. */
  system: string
}

/** Writes a cordis.yml composing llm + llm-openai, tools, sessions, memory, checkpoints, telemetry. */
export function writeComposition(file: string, options: CompositionOptions): void {
  const rows = [
    ['llm', '@rein/llm', '{ retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }'],
    ['model', '@rein/llm-openai', `{ provider: mock, label: mock, baseURL: '${options.baseURL}', apiKeyEnv: ${KEY_ENV} }`],
    ['tools', '@rein/tools'],
    ['sessions', '@rein/session'],
    ['session-store', '@rein/session-jsonl'],
    ['memory', '@rein/memory'],
    ['memory-store', '@rein/memory-sqlite'],
    ['checkpoints', '@rein/checkpoint'],
    ['checkpoint-store', '@rein/checkpoint-jsonl'],
    ['telemetry', '@rein/telemetry'],
    ['otel', '@rein/otel-http', `{ endpoint: '${options.otlp}', captureContent: ${options.captureContent}, flushTimeoutMs: 10000 }`],
    ['agents', '@rein/agent', JSON.stringify({ provider: 'mock', model: 'mock-model', system: options.system })],
    ['fs', '@rein/tool-fs'],
    ['jobs', '@rein/jobs'],
    ['bash', '@rein/tool-bash'],
  ]
  const yml = rows.flatMap(([id, name, config]) => [`- id: ${id}`, `  name: '${name}'`, ...(config ? [`  config: ${config}`] : [])])
  writeFileSync(file, `${yml.join('\n')}\n`)
}

/** How one process ended, and everything it printed. */
export interface ReinProcess {
  readonly args: readonly string[]
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const running = new Set<ChildProcess>()

/** Kills the `rein` processes still running (a test that failed or timed out left them); for afterAll. */
export function killRunning(): void {
  for (const child of running) child.kill('SIGKILL')
}

/** Runs `rein <args>` in `cwd` with exactly `env` (plus what Node needs), to the end. */
export function runRein(cwd: string, args: string[], env: Record<string, string>, limitMs: number): Promise<ReinProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.add(child)
    let stdout = ''
    let stderr = ''
    // A hang guard, not a timing check: a run that never ends is killed and reported as such.
    const guard = setTimeout(() => child.kill('SIGKILL'), limitMs)
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.on('error', (error) => {
      running.delete(child)
      clearTimeout(guard)
      reject(error)
    })
    child.on('close', (code, signal) => {
      running.delete(child)
      clearTimeout(guard)
      resolve({ args, code, signal, stdout, stderr })
    })
  })
}
