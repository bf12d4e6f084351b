/** The jobs spec: what a producer (a tool) hands `ctx.jobs.start`, what its body gets, and what consumers read. */

import type { JobId } from '@rein/base'
import type { RunIdentity } from '@rein/tools'

/** Where a job stands. `killed`: ended by `kill`, by its owner or the service going away, or by the process exiting. */
export type JobStatus = 'running' | 'done' | 'failed' | 'killed'

/**
 * Why the service ended a job (status `killed`): `kill` (someone called `kill`), `owner` (the
 * owner's session closed), `disposed` (the jobs plugin was disposed), `exit` (`settle` ran out of
 * time as the process ends), `lost` (a previous process died without recording the job's end).
 */
export type KillCause = 'kill' | 'owner' | 'disposed' | 'exit' | 'lost'

/** How a finished process ended: its exit code, or the signal that ended it. */
export interface JobExit {
  exitCode?: number | null
  signal?: string | null
  /**
   * The producer stopped the job because its own time limit passed (bash's `timeout_ms`): that
   * limit, in ms. The job still ends `done`; its status line says `[timed out after N ms]`.
   */
  timedOutAfterMs?: number | null
  /**
   * The job's result, when it has one worth keeping (a subagent's answer): logged with its end in
   * the owner's log, so an owner that reads it only after a restart (or after it closed and was
   * resumed) still gets it from `read`. Cut to `bufferChars` as the output is, its end kept (how
   * much was cut is logged, and is `read`'s `droppedChars`): a result also written last to the
   * output reads the same either way. Not added to the output: write it there too.
   */
  result?: string | null
}

/**
 * What a later process needs to stop a job this one could not: a process group and a marker — an
 * exact `NAME=value` entry every process of the job carries in its environment. A recorded group
 * is killed only while a process in it still carries the marker (so a reused id is left alone).
 */
export interface JobRecord {
  processGroup?: number
  marker?: string
}

/** What a job's body gets: its id, its signal, and the one way to report output and the outcome. */
export interface JobRun {
  readonly jobId: JobId
  /** Aborted by `kill`, by the owner's session closing, by `settle` timing out, or by disposing the plugin. */
  readonly signal: AbortSignal
  /** Adds output, as the model should read it (the producer formats streams, e.g. marks stderr). Ignored once the job ended. */
  output(text: string): void
  /** The job finished. First settlement wins; later ones are ignored. */
  done(exit?: JobExit): void
  /** The job failed (not a non-zero exit, which is `done`). First settlement wins. */
  fail(error: unknown): void
  /**
   * The job's work never started (its process could not be spawned): it fails with `error`, says
   * it never started, and names no `outputPath` from then on (live or read back from the log), so
   * the producer may remove a file nothing was written to. First settlement wins.
   */
  neverStarted(error: unknown): void
  /**
   * The output file (`StartJob.outputPath`) stopped keeping the whole output (it reached its size
   * cap): `note` says how, in a few words (`only its first 4 KiB`; cut to 200 characters). Output
   * dropped from the buffer from then on may not be in the file, and `job_output`'s drop note says
   * so with the file's path. The last call wins; ignored once the job ended or without an `outputPath`.
   */
  outputFileCut(note: string): void
  /**
   * Where to read the line the producer holds back because it may still change (a progress bar
   * redrawn with `\r`): `line()` gives its state now, `''` for none. Called once, not per chunk:
   * `read` calls `line` and shows its end (400 characters) after the unread output
   * (`JobOutput.pending`), neither counted, consumed nor logged; the job calls it once more as it
   * ends and keeps that state (a killed job shows what it had). A later call replaces `line`;
   * ignored once the job ended. A `line` that throws or gives no string shows nothing.
   */
  pending(line: () => string): void
  /**
   * Stores what a later process needs to reap the job after a crash, and makes the session log
   * durable. Record the marker before spawning and the group after; calls merge. Rejects with
   * `JOB_RECORD_FAILED` when the log cannot be saved (then nothing could reap the job: stop it).
   */
  record(details: JobRecord): Promise<void>
}

/** What `ctx.jobs.start` takes. */
export interface StartJob {
  /** Names the producer and prefixes the id: `bash` → `bash-1`. Lowercase letters, digits, `_`; at most 32. */
  kind: string
  /** One line for people and the model (the command, say); cut to 200 characters. */
  label: string
  /** The run that starts the job: its session's agent owns it. */
  owner: RunIdentity
  /**
   * The body. It starts before `start` returns and the job lives until the promise it returns
   * settles: resolving without a settlement is `done` with no exit code, a throw or a rejection
   * is `failed`.
   */
  run: (job: JobRun) => void | Promise<void>
  /** The starter's signal (a tool call's): already aborted → `JOB_START_ABORTED`. Not watched afterwards. */
  signal?: AbortSignal
  /** Where the producer keeps the whole output, if it does: named when output is dropped from the buffer. */
  outputPath?: string
  /**
   * What the job works on, for its producer to find after a crash (a subagent's session id): logged
   * with the job and handed back in `jobs/lost`. At most 200 characters. When it names a session
   * below the owner's, a job a dead process left without an end ends as that session's last run
   * did (begun after the job started): `completed` → `done` with its answer as the result, an
   * error → `failed`; open or `interrupted` → lost.
   */
  ref?: string
}

/** A job a dead process left without an end, as `jobs/lost` tells its producer when reaping finds it. */
export interface LostJob {
  sessionId: string
  jobId: string
  kind: string
  label: string
  ref?: string
}

/** What `start` returns. Its JSON (and spread) is `{kind, jobId}`, the value a tool returns to the model; `done` is not enumerable. */
export interface JobHandle {
  readonly kind: 'background'
  readonly jobId: JobId
  /** Settles with the job's final state when it ends (first settlement). Never rejects. */
  readonly done: Promise<JobInfo>
}

/** Who asks: jobs are visible to their owner's session and the sessions above it (its parent chain). */
export type JobViewer = Pick<RunIdentity, 'sessionId'>

/** A job as consumers see it; a snapshot, frozen. Times are epoch milliseconds. */
export interface JobInfo {
  readonly jobId: JobId
  readonly kind: string
  readonly label: string
  readonly status: JobStatus
  readonly exitCode?: number
  readonly signal?: string
  /** The producer stopped it at its own time limit, this many ms (`JobExit.timedOutAfterMs`). */
  readonly timedOutAfterMs?: number
  /** Status `failed`: what went wrong. */
  readonly error?: string
  /** Status `killed`: why. */
  readonly cause?: KillCause
  /** Status `failed`: its work never started (`JobRun.neverStarted`); no `outputPath` is named. */
  readonly neverStarted?: true
  /** The owner's session and agent name. */
  readonly sessionId: string
  readonly agent: string
  readonly startedAt: number
  readonly endedAt?: number
  /** Output waiting to be read, in characters. */
  readonly unreadChars: number
  /** Unread output dropped from the bounded buffer since the last read. */
  readonly droppedChars: number
  /** Where the producer keeps the whole output (`StartJob.outputPath`); logged, so it outlives the process. */
  readonly outputPath?: string
  /** The file at `outputPath` no longer holds the whole output: how (`JobRun.outputFileCut`). Logged with its end, so a later process says it too. */
  readonly outputFileNote?: string
  /**
   * True for a job read back from the session log: it ran before this plugin last met the session
   * (in an earlier rein process, before its agent was closed and resumed, or under an earlier load
   * of the plugin), so no output is held in memory; `outputPath` has it, if anything does, and
   * `read` gives the result its end logged (`JobExit.result`), if any. Status `running` here means
   * its end is still being read from its child session (`wait` for it).
   */
  readonly earlier?: boolean
}

/** What `read` returns: the output not read before (then it counts as read), and the job's state after. */
export interface JobOutput {
  readonly info: JobInfo
  readonly output: string
  /** Characters dropped since the last read, before `output` (for an `earlier` job: cut from the head of its kept result). */
  readonly droppedChars: number
  /** The last state of a line the producer still holds (`JobRun.pending`), when there is one: not part of `output`. */
  readonly pending?: string
}

/** What `settle` did: the jobs that ended while it waited, and those it killed when time ran out. */
export interface SettleReport {
  readonly finished: readonly JobInfo[]
  readonly killed: readonly JobInfo[]
}
