/** The `snapshot` part of `@rein/checkpoint`'s Config: how `exec` calls are covered. */

import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import Schema from '@deepseek-ai/schemastery'

/**
 * Skipped by every snapshot, on top of the `.gitignore` files (gitignore syntax, from the
 * workspace root): version-control folders, and dependency and cache folders a command rebuilds.
 */
const DEFAULT_SNAPSHOT_IGNORE: readonly string[] = [
  '.git/', '.hg/', '.svn/', '.jj/', 'node_modules/', '.venv/', 'venv/', '__pycache__/', '.mypy_cache/', '.pytest_cache/',
  '.ruff_cache/', '.tox/', '.gradle/', '.DS_Store',
]

/** How `exec` calls are snapshotted (see the README's Config table). */
export interface SnapshotConfig {
  enabled: boolean
  skip: string[]
  ignore: string[]
  maxFileBytes: number
  maxFiles: number
  maxStoreBytes: number
  folder?: string
}

/** `$REIN_HOME`, else `~/.rein`: rein's own folder, when the Config names none. */
export function reinHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.REIN_HOME ? resolve(env.REIN_HOME) : join(homedir(), '.rein')
}

/** The `snapshot` Config schema. */
export const SnapshotConfig: Schema<Partial<SnapshotConfig>, SnapshotConfig> = Schema.object({
  enabled: Schema.boolean().default(true).description('Snapshot the workspace around every exec tool call, so what a command changed can be rewound.'),
  skip: Schema.array(Schema.string()).default(['job_kill']).description('Exec tools not snapshotted (they change no files themselves).'),
  ignore: Schema.array(Schema.string()).default([...DEFAULT_SNAPSHOT_IGNORE]).description('Paths no snapshot reads (gitignore syntax, from the workspace root), on top of the .gitignore files.'),
  maxFileBytes: Schema.natural().default(8 * 1024 * 1024).description('Files larger than this are not kept; a change to one is reported as not restored.'),
  maxFiles: Schema.natural().default(200_000).description('A walk indexes at most this many files; the rest are reported as not covered.'),
  maxStoreBytes: Schema.natural().default(2 * 1024 * 1024 * 1024).description('Cap of the shared snapshot store; its oldest packs go first.'),
  folder: Schema.string().description('The shared snapshot store. Default: <home>/snapshots (see home).'),
}) as Schema<Partial<SnapshotConfig>, SnapshotConfig>
