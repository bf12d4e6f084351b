/** How a job ended, apart from its status: the fields a snapshot, the log's `jobs/end` and the tools carry alike. */

import type { KillCause } from './types.ts'

/** A job's ending besides its status; each field is absent, never undefined, when it does not apply. */
export type JobEnding = {
  exitCode?: number
  signal?: string
  /** The producer stopped it at its own time limit (`JobExit.timedOutAfterMs`). */
  timedOutAfterMs?: number
  /** Status `failed`: what went wrong. */
  error?: string
  /** Status `killed`: why. */
  cause?: KillCause
  /** Status `failed`: its work never started (`JobRun.neverStarted`), so it has no output file. */
  neverStarted?: true
}

/** The ending fields `from` has, copied without the ones it lacks (`from` may be a whole snapshot or log record). */
export function endingOf(from: Readonly<JobEnding> | undefined): JobEnding {
  if (!from) return {}
  const { exitCode, signal, timedOutAfterMs, error, cause, neverStarted } = from
  return {
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(signal === undefined ? {} : { signal }),
    ...(timedOutAfterMs === undefined ? {} : { timedOutAfterMs }),
    ...(error === undefined ? {} : { error }),
    ...(cause === undefined ? {} : { cause }),
    ...(neverStarted === true ? { neverStarted } : {}),
  }
}
