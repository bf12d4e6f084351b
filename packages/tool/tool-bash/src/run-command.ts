/**
 * Runs one command on this machine: `bash -c` in a new session and process group, output passed on
 * as it is read (paused while the consumer catches up), stopped on timeout or cancel, and whatever
 * it leaves running stopped when it ends.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { accessSync, closeSync, constants, openSync, readlinkSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import { stopProcesses } from './process-stop.ts'
import { track } from './exit-guard.ts'
import { MARKER_VARIABLE, type ShellExit, type ShellProcess, type ShellRequest, type ShellStream } from './shell.ts'

/** What the local executor runs every command with. */
export interface RunSettings {
  /** The shell program, looked up on the environment's PATH. */
  shell: string
  /** From SIGTERM to SIGKILL, and the longest wait for pipes a stray process still holds. */
  killGraceMs: number
  env: Readonly<Record<string, string>>
  logger: Logger
}

type Ending = 'exit' | 'timeout' | 'cancel'

/** Resolves when the command and everything it started have ended; rejects only when it could not start. */
export async function runCommand(settings: RunSettings, request: ShellRequest, stop: AbortSignal): Promise<ShellExit> {
  if (request.signal.aborted || stop.aborted) return { exitCode: null, signal: null, timedOut: false, cancelled: true, leftovers: 0 }
  const marker = request.marker ?? randomUUID()
  const unfit = unfitCommand(request.command)
  if (unfit !== undefined) throw new ReinError('SHELL_START_FAILED', unfit)
  const folder = holdFolder(request.cwd)
  let child: ChildProcess
  try {
    child = spawn(settings.shell, ['-c', request.command], {
      cwd: folder.cwd,
      env: { ...settings.env, ...request.env, [MARKER_VARIABLE]: marker },
      // detached: setsid(), so the command has its own session and process group to signal as one.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    // Thrown, not emitted: the command or the environment over the system's limit (E2BIG), a NUL in the environment.
    throw startFailure(error, settings.shell, request.command)
  } finally {
    // The child has changed into the folder (or failed to) by the time spawn returns.
    folder.release()
  }
  const pid = await started(child, settings.shell, request.cwd)
  // Later errors (a failed kill) must not become an uncaught 'error' event.
  child.on('error', (error) => settings.logger.error('shell process %d: %s', pid, error))
  const target: ShellProcess = Object.freeze({ pid, processGroup: pid, marker })
  const untrack = track(target)
  try {
    try {
      request.onStart?.(target)
    } catch (error) {
      settings.logger.error('a shell onStart callback failed: %s', error)
    }
    const streams = pump(child, request, settings.logger)
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
    const ending = await firstEnding(exited, request, stop)
    let leftovers = 0
    if (ending !== 'exit') await stopProcesses(target, settings.killGraceMs)
    const [exitCode, signal] = await exited
    // The shell is gone; anything still running was left behind (`cmd &`, `setsid cmd`, `nohup cmd`).
    if (ending === 'exit') leftovers = await stopProcesses(target, settings.killGraceMs)
    await streams.closed(settings.killGraceMs)
    return { exitCode, signal, timedOut: ending === 'timeout', cancelled: ending === 'cancel', leftovers }
  } finally {
    untrack()
  }
}

/** Why `command` cannot be passed to a shell at all, or `undefined`: no argument of a program can hold a NUL. */
function unfitCommand(command: string): string | undefined {
  if (command.includes('\0')) return 'the command holds a NUL byte, which no command line can carry; remove it (printf \'\\0\' writes one)'
  return undefined
}

/**
 * What spawn's synchronous throw means. E2BIG: the command is over the system's limit for one
 * argument (128 KiB on Linux with 4 KiB pages) or, with the environment, for all of them.
 */
function startFailure(error: unknown, shell: string, command: string): ReinError {
  if ((error as NodeJS.ErrnoException).code === 'E2BIG') {
    return new ReinError('SHELL_START_FAILED', `the command is too long to start: ${Buffer.byteLength(command)} bytes, more than the system takes for one command line (E2BIG); write long content to a file with a file tool, or split the command`, { cause: error })
  }
  return new ReinError('SHELL_START_FAILED', `could not start "${shell}": ${(error as Error).message}; shorten the command or the environment it is given`, { cause: error })
}

/**
 * Linux's O_PATH (Node does not name it): a descriptor that only holds the folder, opened without
 * read permission, so a folder the user may enter but not list (mode --x) can be started in, as
 * `cd` allows; entering it is then checked where the shell starts.
 */
const O_PATH = 0o10000000

/**
 * The folder to start in, held open so the shell starts in that very folder and not wherever its
 * name points by then: a link swapped in between the caller's check and the start cannot move the
 * command outside. `cwd` must be a real path (no links). A folder that cannot be opened, or is not
 * the one the path named a moment ago, refuses the start (nothing runs). Linux with /proc only;
 * elsewhere the path as given.
 */
function holdFolder(cwd: string): { cwd: string; release(): void } {
  if (process.platform !== 'linux') return { cwd, release: () => {} }
  let fd: number
  try {
    fd = openSync(cwd, O_PATH | constants.O_DIRECTORY)
  } catch (error) {
    throw new ReinError('SHELL_START_FAILED', `could not start in ${cwd}: ${(error as Error).message}; check that the directory exists`, { cause: error })
  }
  const release = () => closeSync(fd)
  let held: string
  try {
    held = readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    // No usable /proc (a chroot, a sandbox): the folder cannot be named by its descriptor.
    release()
    return { cwd, release: () => {} }
  }
  if (held !== cwd) {
    release()
    throw new ReinError('WORKDIR_CHANGED', `the folder ${cwd} changed while the command was starting (it now opens ${held}); nothing ran; check the path and call again`)
  }
  try {
    accessSync(`/proc/self/fd/${fd}`, constants.X_OK)
  } catch (error) {
    release()
    throw new ReinError('SHELL_START_FAILED', `could not start in ${cwd}: the folder may not be entered (${(error as NodeJS.ErrnoException).code ?? 'no search permission'}); nothing ran; give a folder the user may enter, or leave workdir out`, { cause: error })
  }
  return { cwd: `/proc/self/fd/${fd}`, release }
}

/** The pid once the process exists; `SHELL_START_FAILED` when it cannot (no such shell, a bad cwd). */
async function started(child: ChildProcess, shell: string, cwd: string): Promise<number> {
  try {
    await once(child, 'spawn')
  } catch (error) {
    throw new ReinError('SHELL_START_FAILED', `could not start "${shell}" in ${cwd}: ${(error as Error).message}; check that the shell is installed and the directory exists`, { cause: error })
  }
  // Set once 'spawn' fired. Never fall back to 0: the group -0 would be rein's own.
  if (child.pid === undefined) throw new ReinError('SHELL_START_FAILED', `"${shell}" started without a process id`)
  return child.pid
}

/** Whichever comes first: the shell exits, the timeout passes, or the call (or the executor) is cancelled. */
async function firstEnding(exited: Promise<unknown>, request: ShellRequest, stop: AbortSignal): Promise<Ending> {
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const signals = [request.signal, stop]
  try {
    return await Promise.race([
      exited.then(() => 'exit' as const),
      new Promise<Ending>((resolve) => {
        if (request.timeoutMs !== undefined) timer = setTimeout(() => resolve('timeout'), request.timeoutMs)
        onAbort = () => resolve('cancel')
        for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true })
        // Aborted while the shell was starting: no 'abort' event will come for that.
        if (signals.some((signal) => signal.aborted)) resolve('cancel')
      }),
    ])
  } finally {
    clearTimeout(timer)
    if (onAbort) for (const signal of signals) signal.removeEventListener('abort', onAbort)
  }
}

/**
 * Passes output on in the order it was read, one chunk at a time: while a consumer's promise is
 * pending both pipes pause (the command then blocks on its full pipe), and a chunk read before the
 * pause took hold waits here for its turn.
 */
function pump(child: ChildProcess, request: ShellRequest, logger: Logger) {
  const pipes = [child.stdout, child.stderr].filter((pipe): pipe is Readable => pipe !== null)
  const queue: [Buffer, ShellStream][] = []
  let busy = false
  let idle: (() => void) | undefined
  const report = (error: unknown) => logger.error('a shell output consumer failed: %s', error)
  const deliver = (chunk: Buffer, stream: ShellStream) => {
    let returned: void | Promise<void>
    try {
      returned = request.onOutput(chunk, stream)
    } catch (error) {
      report(error)
      return
    }
    if (returned === undefined) return
    busy = true
    for (const pipe of pipes) pipe.pause()
    returned.then(next, (error: unknown) => {
      report(error)
      next()
    })
  }
  const next = () => {
    busy = false
    while (!busy && queue.length > 0) {
      const [chunk, stream] = queue.shift() ?? []
      if (chunk && stream) deliver(chunk, stream)
    }
    if (busy) return
    for (const pipe of pipes) pipe.resume()
    idle?.()
  }
  const listen = (pipe: Readable, stream: ShellStream) => pipe.on('data', (chunk: Buffer) => {
    if (busy) queue.push([chunk, stream])
    else deliver(chunk, stream)
  })
  if (child.stdout) listen(child.stdout, 'stdout')
  if (child.stderr) listen(child.stderr, 'stderr')
  const done = Promise.all(pipes.map((pipe) => once(pipe, 'close').catch(() => undefined)))
  return {
    /**
     * Waits for both pipes to close and the consumer to take every chunk. A process out of reach
     * still holding a pipe gets `graceMs`, then the pipe is cut.
     */
    async closed(graceMs: number) {
      const timer = new AbortController()
      const late = sleep(graceMs, 'late' as const, { signal: timer.signal }).catch(() => 'closed' as const)
      const outcome = await Promise.race([done.then(() => 'closed' as const), late])
      timer.abort()
      if (outcome === 'late') {
        for (const pipe of pipes) pipe.destroy()
        await done
      }
      if (busy) await new Promise<void>((resolve) => { idle = resolve })
    },
  }
}
