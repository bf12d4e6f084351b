/** The `bash` tool: checks the call, finds the executor (`ctx.shell`) and turns its run into a value. */

import { ReinError, defineTool, type RecoverContext, type ToolDefinition, type ToolRun } from '@rein/tools'
import { BASH_VALUE, finishedValue, presentationMeta, presentCall, presentResult, renderValue, summarize, type BashValue } from './bash-value.ts'
import { callMarker, claimMarker } from './call-marker.ts'
import { checkCommand } from './command-rules.ts'
import type { BashToolConfig } from './config.ts'
import { OutputCollector } from './output-collector.ts'
import type { ShellExecutor } from './shell.ts'
import { formatBytes } from './spill-sink.ts'
import { resolveWorkdir } from './workdir.ts'

/** Arguments as the body gets them. */
export interface BashArgs {
  command: string
  description: string
  timeout_ms?: number
  workdir?: string
  run_in_background?: boolean
}

/** Starts a checked command as a background job and returns its handle. */
export type StartInBackground = (request: BackgroundRequest) => Promise<BashValue>

/** What the background path gets: the checked command and the executor to run it with. */
export interface BackgroundRequest {
  command: string
  label: string
  cwd: string
  timeoutMs: number | undefined
  shell: ShellExecutor
  run: ToolRun
  /** The most bytes of output its spill file takes. Absent: no limit. */
  maxOutputFileBytes?: number
}

/** What `createBashTool` needs besides Config. */
export interface BashToolOptions extends BashToolConfig {
  /** The executor, looked up at each call (so a swapped executor takes over at the next call). */
  shell: () => ShellExecutor | undefined
  /** Present: the schema offers `run_in_background`, and such calls go here. */
  background?: StartInBackground
  /** Aborts every running call (the plugin is going away). */
  signal?: AbortSignal
  /**
   * The executor's SIGTERM-to-SIGKILL grace (the local one's `killGraceMs`): a cancelled call
   * waits for the command's stop, which takes up to about twice it. Default 2000.
   */
  killGraceMs?: number
}

/** Headroom the executor gets past the longest timeout to stop the command before the registry's deadline. */
const STOP_HEADROOM_MS = 60_000
/** The longest cancel grace @rein/tools accepts (its registration refuses more). */
const MAX_CANCEL_GRACE_MS = 10_000
/** Past the two waits of killGraceMs: the scans, the SIGKILL rounds and the spill file's close. */
const CANCEL_HEADROOM_MS = 1_000
const DEFAULT_KILL_GRACE_MS = 2_000

/**
 * How long a cancelled call waits for the body's own value: the executor's stop — SIGTERM,
 * `killGraceMs`, SIGKILL, then at most `killGraceMs` more for pipes a stray process holds — so the
 * value (the output so far, `[cancelled]`) comes back once the command's processes are gone.
 */
function cancelGrace(killGraceMs = DEFAULT_KILL_GRACE_MS): number {
  return Math.min(MAX_CANCEL_GRACE_MS, 2 * killGraceMs + CANCEL_HEADROOM_MS)
}

/** The model-facing arguments; `run_in_background` is taken out when no jobs service is there. */
const PARAMETERS = (options: BashToolConfig) => ({
  command: { type: 'string', required: true, minLength: 1, description: 'The command line, run as bash -c "<command>".' },
  description: {
    type: 'string', required: true, minLength: 1, maxLength: 200,
    description: 'What the command does in 5-10 words, shown to the user, e.g. "Run the unit tests".',
  },
  timeout_ms: {
    type: 'integer', minimum: 1, maximum: options.maxTimeoutMs,
    description: `Stop the command after this many milliseconds. Default ${options.defaultTimeoutMs}, at most ${options.maxTimeoutMs}.`,
  },
  workdir: {
    type: 'string', minLength: 1,
    description: 'Directory to start in: relative to the current directory, or absolute; inside the workspace. Default: the current directory.',
  },
  run_in_background: {
    type: 'boolean',
    description: 'Start the command as a background job and return its id at once (for servers, watchers, long builds). Default false.',
  },
}) as const

/** The `bash` tool definition for `ctx.tools.register`. */
export function createBashTool(options: BashToolOptions): ToolDefinition<BashArgs, BashValue> {
  const definition = defineTool({
    name: 'bash',
    description: describe(options),
    parameters: PARAMETERS(options),
    output: { schema: BASH_VALUE, render: (_args, value) => renderValue(value), presentationMeta: (_args, value) => presentationMeta(value) },
    effects: ['exec'],
    timeoutMs: options.maxTimeoutMs + STOP_HEADROOM_MS,
    // Without it the registry answers a cancel at once (ABORTED): the output would be lost, and the
    // command's processes still alive while the model reads that it was cancelled.
    cancelGraceMs: cancelGrace(options.killGraceMs),
    execute: (args, run) => execute(args, run, options),
    recover: (call, context) => recover(call.callId, context, options),
    presentCall,
    presentResult,
    summarize,
  })
  if (options.background) return definition
  const { run_in_background: _offered, ...parameters } = PARAMETERS(options)
  return { ...definition, parameters }
}

async function execute(args: BashArgs, run: ToolRun, options: BashToolOptions): Promise<BashValue> {
  checkCommand(args.command, options)
  const cwd = await resolveWorkdir(args.workdir, run)
  const shell = options.shell()
  if (!shell) {
    throw new ReinError('NO_SHELL_EXECUTOR', 'no shell executor is loaded (ctx.shell); load @rein/tool-bash with localExecutor: true, or a plugin that provides one')
  }
  if (args.run_in_background === true && options.background) {
    return options.background({
      command: args.command, label: args.description, cwd, timeoutMs: args.timeout_ms, shell, run, maxOutputFileBytes: options.maxOutputFileBytes,
    })
  }
  const timeoutMs = args.timeout_ms ?? options.defaultTimeoutMs
  const collector = new OutputCollector({ chars: options.outputChars, lines: options.outputLines }, run.spill, options.maxOutputFileBytes)
  const signal = options.signal ? AbortSignal.any([run.signal, options.signal]) : run.signal
  // Derived from the session and the call: after a crash, `recover` finds the command by it.
  const { marker, release } = claimMarker(run)
  try {
    const exit = await shell.run({ command: args.command, cwd, timeoutMs, signal, marker, onOutput: (chunk, stream) => collector.write(chunk, stream) })
    return finishedValue(exit, await collector.finish(), timeoutMs)
  } finally {
    release()
  }
}

/**
 * A call a crash left without a result (rein was killed mid-call): stops whatever of its command
 * still runs, found by the call's marker. When something did, the command was most likely cut off
 * (or killed while its leftovers were being stopped): the call failed with `COMMAND_INTERRUPTED`.
 * Else it declines, and the model is told the outcome is unknown (it may have finished just before
 * the crash).
 */
async function recover(callId: string, context: RecoverContext, options: BashToolOptions): Promise<{ error: ReinError } | undefined> {
  // Outside a session the marker was random: nothing can be found.
  if (context.sessionId === undefined) return undefined
  const shell = options.shell()
  if (!shell?.reap) {
    context.logger.warn('bash call %s: the shell executor (%s) cannot look for processes the call left running', callId, shell?.kind ?? 'none loaded')
    return undefined
  }
  const stopped = await shell.reap({ marker: callMarker(context.sessionId, callId) })
  if (stopped === 0) return undefined
  context.logger.info('bash call %s: stopped %d process(es) it left running when rein ended mid-call', callId, stopped)
  const processes = stopped === 1 ? '1 process' : `${stopped} processes`
  return {
    error: new ReinError('COMMAND_INTERRUPTED', `the command's processes were still running when rein was stopped (killed): ${processes} stopped now, so it was most likely cut off before it finished. What it did before that is in the workspace; check before running it again`),
  }
}

function describe(options: BashToolOptions): string {
  return [
    'Runs a shell command with bash -c and returns its output and exit code.',
    'Each call starts a new shell in the current directory (or workdir): cd, exports and aliases do not carry over.',
    'stdin is empty, so use non-interactive flags (e.g. --yes); there is no color, pager or editor.',
    'stdout and stderr come interleaved as they arrive; stderr lines start with "[stderr] ".',
    // A text transcript, not the bytes: the model must not take the file for a binary's copy.
    `Long output shows its first and last lines and the path of a file with all of it as text (invalid UTF-8 replaced), up to ${formatBytes(options.maxOutputFileBytes)}.`,
    'A non-zero exit code is reported, not an error.',
    'At timeout_ms the command is stopped, with everything it started;',
    'processes it leaves running when it ends are stopped too.',
    options.background ? 'Use run_in_background for servers and watchers.' : '',
    'Prefer dedicated file tools, when you have them, for reading, searching and editing files.',
  ].filter((line) => line !== '').join(' ')
}
