/** The package's Config: the `bash` tool's own fields, and the local executor's when it registers one. */

import Schema from '@deepseek-ai/schemastery'
import { ReinError } from '@rein/base'
import { localShellFields, type LocalShellConfig } from './local-shell.ts'

/** What the `bash` tool itself is configured with. */
export interface BashToolConfig {
  /** Milliseconds a command may run when the call names no `timeout_ms`. Default 120000. */
  defaultTimeoutMs: number
  /** The largest `timeout_ms` a call may ask for. Default 600000. */
  maxTimeoutMs: number
  /** Output longer than this many characters is previewed (head, tail, file path). Default 16000. */
  outputChars: number
  /** Output longer than this many lines is previewed. Default 800. */
  outputLines: number
  /** Bytes of a command's output written to its spill file; the rest is counted, not saved. Default 64 MiB. */
  maxOutputFileBytes: number
  /** Command patterns (`*` = anything); with any, every piece of a command must match one. Default none. */
  allow: string[]
  /** Command patterns refused before running. Default none. */
  deny: string[]
}

/** The package's Config: the tool's fields, `localExecutor`, and the local executor's fields. */
export interface BashConfig extends BashToolConfig, LocalShellConfig {
  /** Register the local executor as `ctx.shell`. false: another plugin (a sandbox) provides it. Default true. */
  localExecutor: boolean
}

const MINUTE = 60_000

/** The schema cordis validates the package's row with; every field has a default. */
export const BashConfig: Schema<Partial<BashConfig>, BashConfig> = Schema.object({
  defaultTimeoutMs: Schema.natural().min(1).max(24 * 60 * MINUTE).default(2 * MINUTE)
    .description('Milliseconds a command may run when the call names no timeout_ms.'),
  maxTimeoutMs: Schema.natural().min(1).max(24 * 60 * MINUTE).default(10 * MINUTE)
    .description('The largest timeout_ms a call may ask for.'),
  outputChars: Schema.natural().min(400).default(16_000).description('Output longer than this (characters) is shown as head + tail + file path.'),
  outputLines: Schema.natural().min(8).default(800).description('Output longer than this (lines) is shown as head + tail + file path.'),
  maxOutputFileBytes: Schema.natural().min(1024).default(64 * 1024 * 1024)
    .description('Bytes of a command\'s output written to its spill file; past it the rest is counted, not saved.'),
  allow: Schema.array(Schema.string()).default([]).description('Command patterns (* = anything); when set, every piece of a command must match one.'),
  deny: Schema.array(Schema.string()).default([]).description('Command patterns refused before running. A convenience, not a sandbox.'),
  localExecutor: Schema.boolean().default(true).description('Register the local executor as ctx.shell; false when another plugin provides one.'),
  ...localShellFields,
}) as Schema<Partial<BashConfig>, BashConfig>

/** Checks what the schema cannot: the default timeout must fit under the maximum. Throws `CONFIG_INVALID`. */
export function checkConfig(config: BashToolConfig): void {
  if (config.defaultTimeoutMs > config.maxTimeoutMs) {
    throw new ReinError('CONFIG_INVALID', `config.defaultTimeoutMs (${config.defaultTimeoutMs}) is above config.maxTimeoutMs (${config.maxTimeoutMs}); lower the default or raise the maximum`)
  }
}
