/** The `rein` exit codes: one per cause, so scripts can tell them apart. */

export const EXIT = {
  /** The turn completed. */
  ok: 0,
  /** The run failed: the model request failed at run time (auth included), the log could not be saved, or a tool or plugin threw with nothing to catch it. */
  error: 1,
  /** Bad usage or configuration: nothing ran. */
  usage: 2,
  /** A budget (max steps, output tokens, cost) ended the turn. */
  budget: 3,
  /** The model hit its output limit for one request; the answer is cut off. */
  outputLimit: 4,
  /** `rein rewind` left some files as they were: drifted, skipped or failed (or, with --dry-run, would). */
  rewindIncomplete: 5,
  /** Cancelled (SIGINT, SIGTERM, stdout closed); every tool call is paired and the log is saved. */
  interrupted: 130,
} as const

/** One of the exit codes `rein` ends with (`EXIT`). */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** The help text's exit-code lines, from the table above so they cannot drift apart. */
export const EXIT_HELP = `Exit codes: 0 completed, 1 the run failed (a provider failure at run time, auth included, the log
could not be saved, or a tool or plugin threw with nothing to catch it), 2 usage or config (nothing ran),
3 a budget ended the turn, 4 the model hit its output limit, 5 rein rewind left some files as they were,
130 interrupted.`
