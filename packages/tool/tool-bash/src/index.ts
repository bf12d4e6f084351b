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
export { LocalShell, type LocalShellConfig } from './local-shell.ts'
/** The tool definition, for hosts that register it themselves. */
export { createBashTool, type BashArgs, type BashToolOptions, type BackgroundRequest, type StartInBackground } from './bash-tool.ts'
/** The tool's value and how it reads. */
export type { BashValue, FinishedValue, StartedValue } from './bash-value.ts'
/** The shell definition an executor implements. */
export { MARKER_VARIABLE, type ShellExecutor, type ShellRequest, type ShellExit, type ShellProcess, type ShellStream } from './shell.ts'
/** The environment every command gets: what passes through and what is fixed. */
export { PASSED_THROUGH, FIXED_ENVIRONMENT } from './environment.ts'
/** Finds and stops what is left of a command (for reaping recorded jobs). */
export { findProcesses } from './process-scan.ts'
export { stopProcesses } from './process-stop.ts'
/** The tool's own Config fields. */
export type { BashToolConfig } from './config.ts'
