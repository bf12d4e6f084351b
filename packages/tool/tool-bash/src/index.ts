/**
 * @rein/tool-bash: the `bash` tool, the shell definition it runs against (`ctx.shell`), and a local
 * executor registered by default. Load it with `name: '@rein/tool-bash'` beside `@rein/tools`.
 */

import type { Context } from '@deepseek-ai/cordis'
import { BashConfig, checkConfig } from './config.ts'
import { LocalShell } from './local-shell.ts'
import { registerBash } from './register.ts'

/** The plugin's name in a cordis.yml row. */
export const name = '@rein/tool-bash'
/** It needs the tool registry; `ctx.jobs`, when loaded, adds `run_in_background`. */
export const inject = ['tools']
/** See the README's Config table. */
export const Config = BashConfig
/** The validated Config. */
export type Config = BashConfig

/** Registers the local executor (unless `localExecutor: false`) and the `bash` tool. */
export const apply = (ctx: Context, config: Config) => {
  checkConfig(config)
  if (config.localExecutor) ctx.plugin(LocalShell, config)
  registerBash(ctx, config)
}

/** The local executor as a plugin of its own: provides `ctx.shell`. */
export { LocalShell } from './local-shell.ts'
/** The local executor's Config: shell, kill grace, environment. */
export type { LocalShellConfig } from './local-shell.ts'
/** The `bash` tool definition, for hosts that register it themselves. */
export { createBashTool } from './bash-tool.ts'
/** The tool's arguments as its body gets them. */
export type { BashArgs } from './bash-tool.ts'
/** What `createBashTool` takes: the tool's Config plus the executor lookup and the background path. */
export type { BashToolOptions } from './bash-tool.ts'
/** What the background path gets: the checked command, its executor and the call's run. */
export type { BackgroundRequest } from './bash-tool.ts'
/** Starts a checked command as a background job (`run_in_background`). */
export type { StartInBackground } from './bash-tool.ts'
/** The tool's value: a finished command or a started background job. */
export type { BashValue } from './bash-value.ts'
/** A command that ran to its end: output (or its preview), exit code, signal, and how it ended. */
export type { FinishedValue } from './bash-value.ts'
/** A command started as a background job: its id and output file. */
export type { StartedValue } from './bash-value.ts'
/** `REIN_BASH_CALL`: the environment variable carrying a command's marker to all its processes. */
export { MARKER_VARIABLE } from './shell.ts'
/** The seam: runs commands for the tool (`ctx.shell`); the local executor or a sandboxed one. */
export type { ShellExecutor } from './shell.ts'
/** One command for an executor to run. */
export type { ShellRequest } from './shell.ts'
/** How a command ended: exit code, signal, timed out, cancelled, leftovers stopped. */
export type { ShellExit } from './shell.ts'
/** A running command's pid, process group and marker. */
export type { ShellProcess } from './shell.ts'
/** What `ShellExecutor.reap` gets: a marker, and the process group when it was recorded. */
export type { ReapTarget } from './shell.ts'
/** Which pipe a chunk of output came from: `stdout` or `stderr`. */
export type { ShellStream } from './shell.ts'
/** Names passed through from rein's environment to every command. */
export { PASSED_THROUGH } from './environment.ts'
/** Values set for every command (no colour, pager, prompt or editor). */
export { FIXED_ENVIRONMENT } from './environment.ts'
/** Finds a command's live processes by group, session, marker and descent (Linux /proc). */
export { findProcesses } from './process-scan.ts'
/** Stops a command's processes: SIGTERM, a grace period, SIGKILL; resolves to how many it found. */
export { stopProcesses } from './process-stop.ts'
/** The tool's own Config fields (without the local executor's). */
export type { BashToolConfig } from './config.ts'
