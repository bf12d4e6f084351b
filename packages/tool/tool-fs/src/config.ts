/** The plugin's Config: where the tools may work, and how much of a file or a search the model gets. */

import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import Schema from '@deepseek-ai/schemastery'
import { MAX_TIMER_MS, ReinError } from '@rein/base'
import { systemCode } from './errors.ts'

export interface FsConfig {
  /** The folder every path must stay inside. Default: the run's workspace root (the agent's, else its cwd). */
  workspaceRoot?: string
  /** Register only `read`, `glob` and `grep`. */
  readOnly: boolean
  /** Lines `read` returns when the model gives no `limit`. */
  readLines: number
  /** Most characters one `read`, `glob` or `grep` answer holds; kept under the agent's spill limit. */
  outputChars: number
  /** A longer line is cut in `read` (and shorter still in `grep`). */
  lineChars: number
  /** Largest file `write`, `edit` and `multi_edit` load or replace, in bytes. */
  maxFileBytes: number
  /** Most paths `glob` lists. */
  globLimit: number
  /** Most matching lines `grep` lists. */
  grepMatches: number
  /** Longest `grep`'s pattern may run on one block of a file (64 KiB of whole lines, more for a longer line), in ms; past it the call ends with `GREP_TIMEOUT`. */
  grepTimeoutMs: number
  /** Skip what `.gitignore` files inside the workspace ignore, in `glob` and `grep`. */
  gitignore: boolean
}

export const FsConfig: Schema<Partial<FsConfig>, FsConfig> = Schema.object({
  workspaceRoot: Schema.string().description('The folder every path must stay inside. Default: the run\'s workspace root.'),
  readOnly: Schema.boolean().default(false).description('Register only read, glob and grep.'),
  readLines: Schema.natural().min(1).default(1000).description('Lines read returns when the model gives no limit.'),
  outputChars: Schema.natural().min(1000).default(18_000)
    .description('Most characters one read, glob or grep answer holds; keep it under the agent\'s spillAfterChars.'),
  lineChars: Schema.natural().min(80).default(2000).description('Longer lines are cut in read.'),
  maxFileBytes: Schema.natural().min(1).default(10 * 1024 * 1024).description('Largest file write, edit and multi_edit handle, in bytes.'),
  globLimit: Schema.natural().min(1).default(200).description('Most paths glob lists.'),
  grepMatches: Schema.natural().min(1).default(200).description('Most matching lines grep lists.'),
  grepTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(5000)
    .description('Longest grep\'s pattern may run on one block of a file, in ms; past it grep ends with GREP_TIMEOUT.'),
  gitignore: Schema.boolean().default(true).description('Skip files .gitignore files inside the workspace ignore, in glob and grep.'),
}) as Schema<Partial<FsConfig>, FsConfig>

/** The defaults, for hosts that build the tools without cordis. */
export function resolveFsConfig(partial: Partial<FsConfig> = {}): FsConfig {
  return FsConfig(partial)
}

/**
 * Checks what the schema cannot: a `workspaceRoot` given must be a folder there now, or every call
 * would fail as if its file were missing. Throws `CONFIG_INVALID`.
 */
export function checkWorkspaceRoot(config: Pick<FsConfig, 'workspaceRoot'>): void {
  if (config.workspaceRoot === undefined) return
  const root = resolve(config.workspaceRoot)
  let problem: string | undefined
  try {
    const stats = statSync(root, { throwIfNoEntry: false })
    if (stats === undefined) problem = 'does not exist; create it, or give the folder the tools may work in'
    else if (!stats.isDirectory()) problem = 'is not a folder; give the folder the tools may work in'
  } catch (error) {
    problem = `cannot be used (${systemCode(error) ?? String(error)}); check who may read it`
  }
  if (problem !== undefined) throw new ReinError('CONFIG_INVALID', `config.workspaceRoot: ${root} ${problem}`, { details: { field: 'workspaceRoot' } })
}
