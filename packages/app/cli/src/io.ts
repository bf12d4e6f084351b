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
  /** Ends the process with its exit code: a row left running may hold it open; `process.exit` in real use, absent in tests. */
  exit?: () => void
}

/** The `Io` of this process. */
export function processIo(): Io {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd(), signals: process, exit: () => process.exit() }
}
