/**
 * A closed stdout or stderr (`rein run … | head -1`) must end the run quietly, not crash it with a
 * stack trace: write errors on either stream are caught here and reported as `outputClosed`.
 */

import type { Io } from './io.ts'

/** The command's io plus a way to undo the guard. */
export interface GuardedIo extends Io {
  release(): void
}

export function guardOutput(io: Io): GuardedIo {
  const closed = new AbortController()
  // EPIPE, or writes after the stream was destroyed: nobody is reading any more.
  const onError = () => { if (!closed.signal.aborted) closed.abort(new Error('output closed')) }
  io.stdout.on('error', onError)
  io.stderr.on('error', onError)
  return {
    ...io,
    outputClosed: closed.signal,
    release: () => {
      // Late write errors may still arrive after the command returned; keep swallowing them.
      closed.abort(new Error('the command ended'))
    },
  }
}
