/**
 * `rein` as a real process from its sources (as packages/app/cli/tests/harness.ts `spawnRein`
 * does), killed with SIGKILL after a delay or once its stdout reached a number of bytes; and a
 * search of /proc for what a run left running.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const CLI = fileURLToPath(new URL('../../../packages/app/cli/', import.meta.url))
const BIN = join(CLI, 'src', 'bin.ts')
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** When the test kills the process itself (the plugin's kills are in its environment): after a delay, or once it printed `afterLines` lines (stdout and stderr: answers and tool progress). */
export type OuterKill = { afterMs: number } | { afterLines: number }

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Every process spawned here that may still run: killed by `killAll` when a test ends. */
const live = new Set<ChildProcess>()

/** Runs `rein <args>` in `cwd` with `env` over this process's environment. */
export function spawnRein(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv, kill?: OuterKill): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', TSX, BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    live.add(child)
    let stdout = ''
    let stderr = ''
    let timer: NodeJS.Timeout | undefined
    if (kill && 'afterMs' in kill) timer = setTimeout(() => child.kill('SIGKILL'), kill.afterMs)
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
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      live.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** SIGKILLs every rein this module started that still runs. */
export function killAll(): void {
  for (const child of live) child.kill('SIGKILL')
}

/** A live process (not a zombie) whose environment or command line holds `marker`. */
export interface Found { pid: number; command: string }

/** Every live process of this user whose environment or argv contains `marker`. */
export function processesWith(marker: string): Found[] {
  const found: Found[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    try {
      const stat = readFileSync(join('/proc', name, 'stat'), 'utf8')
      // The state follows the parenthesized command name: a zombie holds nothing.
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const command = readFileSync(join('/proc', name, 'cmdline'), 'utf8')
      const environ = readFileSync(join('/proc', name, 'environ'), 'utf8')
      if (command.includes(marker) || environ.includes(marker)) found.push({ pid, command: command.replaceAll('\0', ' ').trim() })
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found
}

/** SIGKILLs what `processesWith` found, so one run's leftovers never reach the next. */
export function killFound(found: readonly Found[]): void {
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
}
