/** The `rein` exit codes: one per cause, so scripts can tell them apart. */

export const EXIT = {
  /** The turn completed. */
  ok: 0,
  /** The turn ended in an error: the model request failed, or the session could not be saved. */
  error: 1,
  /** Bad usage, a bad cordis.yml, an unknown session: nothing ran. */
  usage: 2,
  /** A budget (max steps, output tokens, cost) ended the turn. */
  budget: 3,
  /** Cancelled by SIGINT/SIGTERM; every tool call is paired and the log is saved. */
  interrupted: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]
