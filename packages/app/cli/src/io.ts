/** What a command may touch: its streams, environment and working directory (injectable for tests). */

import type { Output } from './render.ts'

/** The streams, environment, folder and signals the CLI runs with: the process's, or a test's. */
export interface Io extends Output {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => void }
  env: NodeJS.ProcessEnv
  cwd: string
  /** Where SIGINT/SIGTERM come from; `process` in real use. */
  signals: Pick<NodeJS.Process, 'on' | 'off'>
  /** Aborted when stdout or stderr can no longer be written (the reader went away). */
  outputClosed?: AbortSignal
  /** Ends the process with its exit code (`leaveOnceDone` says when); `process.exit` in real use, absent in tests. */
  exit?: () => void
}

/**
 * The `Io` of this process. Its stdout is rein's own: whatever else writes to `process.stdout` (a
 * tool's or a plugin's console.log, or its own write) goes to stderr, so `--json` stays JSON and
 * the answer stays the answer.
 */
export function processIo(): Io {
  return { stdout: ownStdout(), stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), signals: process, exit: () => process.exit() }
}

/**
 * `process.stdout` as only rein writes to it: its own `write`, while `process.stdout.write` (which
 * the console uses too) now writes to stderr. Everything else (isTTY, columns, 'error' listeners
 * for a closed pipe) is the real stream's.
 */
function ownStdout(): NodeJS.WriteStream {
  const { stdout, stderr } = process
  const write = stdout.write.bind(stdout)
  stdout.write = toStderr(stdout, stderr)
  return new Proxy(stdout, {
    get: (target, key) => {
      if (key === 'write') return write
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * `process.stdout.write` for everyone but rein: the text goes to stderr, and a writer told to wait
 * (false) is woken by stderr's 'drain', emitted on stdout where it waits for it.
 */
function toStderr(stdout: NodeJS.WriteStream, stderr: NodeJS.WriteStream): NodeJS.WriteStream['write'] {
  const write = stderr.write.bind(stderr) as (...args: unknown[]) => boolean
  return ((...args: unknown[]) => {
    const accepted = write(...args)
    if (!accepted) stderr.once('drain', () => stdout.emit('drain'))
    return accepted
  }) as NodeJS.WriteStream['write']
}

/** How long the process may outlive its command, still held open, before rein ends it. */
const GRACE_MS = 1_500

/**
 * Once the command is done (its session saved, the composition disposed), the process ends with
 * its exit code even if a tool or plugin left a timer or a socket holding it open. `told`: the
 * command said already what it left (a stuck reload's rows), so it ends at once and quietly;
 * otherwise after a short grace, with one line. The timer is unref'd: a process that has nothing
 * left ends by itself, never later for it.
 */
export function leaveOnceDone(io: Pick<Io, 'stdout' | 'stderr' | 'exit'>, told = false): void {
  const exit = io.exit
  if (!exit) return
  // Counted from when rein's own output has reached its readers: a slow pipe is no work left running.
  void flushed(io).then(() => {
    setTimeout(() => {
      if (!told) io.stderr.write('rein: a tool or plugin left work running after the command ended; exiting\n')
      exit()
    }, told ? 0 : GRACE_MS).unref()
  })
}

/** Resolves once what was written to stdout and stderr before has been handed on (or could not be: a closed pipe). */
function flushed(io: Pick<Io, 'stdout' | 'stderr'>): Promise<unknown> {
  const drained = (stream: NodeJS.WritableStream) => new Promise<void>((resolve) => {
    try {
      stream.write('', () => resolve())
    } catch {
      resolve()
    }
  })
  return Promise.all([drained(io.stdout), drained(io.stderr)])
}
