/**
 * `rein` as a real process from its sources (`node --conditions=@rein/source --import tsx
 * packages/app/cli/src/bin.ts …`, as packages/app/cli/tests/harness.ts `spawnRein` does), with
 * what it printed, an optional hang guard and an optional kill by the test; and `killAll` for a
 * suite's clean-up.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

const BIN = fileURLToPath(new URL('../../packages/app/cli/src/bin.ts', import.meta.url))
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** When the test kills the process itself: after a delay, or once it printed `afterLines` lines (stdout and stderr together). */
export type OuterKill = { afterMs: number } | { afterLines: number }

/** How to run one `rein`. */
export interface ReinOptions {
  cwd: string
  /** What follows `rein`. */
  args: readonly string[]
  /**
   * Variables over this process's environment (which gets NO_COLOR=1 and an empty NODE_OPTIONS
   * first); with `envOnly`, the whole environment besides PATH and NO_COLOR=1, so only what the
   * suite sets reaches rein.
   */
  env?: NodeJS.ProcessEnv
  envOnly?: boolean
  /**
   * A process still running after this long is SIGKILLed and reported `hung`: a bound on a hang,
   * not a speed check. None by default (the test's own timeout bounds it).
   */
  guardMs?: number
  /** The test's own kill, part of what the suite does: not `hung`. */
  kill?: OuterKill
}

/** How a `rein` process ended, and everything it printed. */
export interface ReinExit {
  readonly args: readonly string[]
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** The guard had to kill it. */
  readonly hung: boolean
}

/** Every process spawned here that may still run: killed by `killAll` when a test ends. */
const live = new Set<ChildProcess>()

/** Runs `rein <args>` to its end (or its kill); rejects only when it could not be spawned. */
export function runRein(options: ReinOptions): Promise<ReinExit> {
  const { args, kill } = options
  const env = options.envOnly
    ? { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...options.env }
    : { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '', ...options.env }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, BIN, ...args], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    live.add(child)
    let stdout = ''
    let stderr = ''
    let hung = false
    const timers: NodeJS.Timeout[] = []
    if (options.guardMs !== undefined) {
      timers.push(setTimeout(() => {
        hung = true
        child.kill('SIGKILL')
      }, options.guardMs))
    }
    if (kill && 'afterMs' in kill) timers.push(setTimeout(() => child.kill('SIGKILL'), kill.afterMs))
    let lines = 0
    const count = (text: string) => {
      lines += text.split('\n').length - 1
      if (kill && 'afterLines' in kill && lines >= kill.afterLines) child.kill('SIGKILL')
    }
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      count(chunk.toString())
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      count(chunk.toString())
    })
    const done = () => {
      for (const timer of timers) clearTimeout(timer)
      live.delete(child)
    }
    child.on('error', (error) => {
      done()
      reject(error)
    })
    child.on('close', (code, signal) => {
      done()
      resolve({ args, code, signal, stdout, stderr, hung })
    })
  })
}

/** SIGKILLs every `rein` this module started that still runs (a test that failed or timed out left them). */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL')
}
