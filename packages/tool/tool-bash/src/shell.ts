/**
 * The shell definition: what a command is and what running one gives back. An executor (the local
 * one here, a sandboxed one later) implements `ShellExecutor` and provides it as `ctx.shell`; the
 * `bash` tool only ever talks to this interface.
 */

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Runs shell commands for the `bash` tool; the package's local executor unless another plugin provides one. */
    shell: ShellExecutor
  }
}

/** Which pipe a chunk of output came from. */
export type ShellStream = 'stdout' | 'stderr'

/** One command to run, as `bash -c <command>`. */
export interface ShellRequest {
  readonly command: string
  /**
   * The real path (absolute, no links) of the directory the command starts in; the caller has
   * checked it. The local executor, on Linux with a usable /proc, starts in that very folder or
   * refuses with `WORKDIR_CHANGED`; elsewhere it starts by path.
   */
  readonly cwd: string
  /** Past this many ms the executor stops the command and the exit says `timedOut`. Absent: no limit. */
  readonly timeoutMs?: number
  /** Aborting it stops the command; the exit then says `cancelled`. */
  readonly signal: AbortSignal
  /**
   * The marker to put in the command's environment (see `ShellProcess.marker`); absent, the
   * executor makes one. A caller that records it before the command starts passes its own.
   */
  readonly marker?: string
  /** Variables for this command only, set over the executor's own environment. */
  readonly env?: Readonly<Record<string, string>>
  /**
   * Each chunk of output, in the order it was read. A returned promise pauses reading from the
   * command until it settles: that is how a slow consumer keeps memory bounded.
   */
  onOutput(chunk: Uint8Array, stream: ShellStream): void | Promise<void>
  /**
   * Once the process exists: what is needed to find its processes again (a job records it). Every
   * executor must call it when given: a background call returns only once it is called.
   */
  onStart?(process: ShellProcess): void
}

/** How to find everything a command started: its process group and the marker in its environment. */
export interface ShellProcess {
  readonly pid: number
  /** The command's own process group (and session): the shell's pid. */
  readonly processGroup: number
  /** The value of `REIN_BASH_CALL` in the environment of every process the command starts. */
  readonly marker: string
}

/**
 * What is known of a command started earlier, perhaps by a process that died: always its marker,
 * and its process group when it was recorded (a `ShellProcess` fits).
 */
export interface ReapTarget {
  readonly marker: string
  /** Absent or 0: not known; the command is found by its marker alone. */
  readonly processGroup?: number
  /** The command's shell, when known; a pid alone never marks a process as the command's. */
  readonly pid?: number
}

/** How a command ended. Only a command that could not start is an error; every end is one of these. */
export interface ShellExit {
  /** The shell's exit code; null when a signal ended it. */
  readonly exitCode: number | null
  /** The signal that ended the shell (`SIGTERM`, …), else null. */
  readonly signal: string | null
  /** The executor stopped it because `timeoutMs` passed. */
  readonly timedOut: boolean
  /** The executor stopped it because `signal` aborted (or the executor was disposed). */
  readonly cancelled: boolean
  /** Processes the command left running, or that escaped its group, stopped when it ended. */
  readonly leftovers: number
}

/** Runs commands. The `bash` tool looks it up as `ctx.shell` at each call. */
export interface ShellExecutor {
  /** A short name for messages and cards: `local`, `bubblewrap`, … */
  readonly kind: string
  /**
   * Runs one command to its end, including stopping what it left behind. Rejects only when the
   * command could not be started (`SHELL_START_FAILED`; `WORKDIR_CHANGED` when its folder was swapped).
   */
  run(request: ShellRequest): Promise<ShellExit>
  /**
   * Stops whatever is left of a command started earlier, even by another process (a job recorded
   * before a crash, a call cut off by one). Resolves to how many processes it found. Optional: an
   * executor whose commands cannot outlive it need not offer it.
   */
  reap?(process: ReapTarget): Promise<number>
}

/** The environment variable that carries a command's marker to every process it starts. */
export const MARKER_VARIABLE = 'REIN_BASH_CALL'
