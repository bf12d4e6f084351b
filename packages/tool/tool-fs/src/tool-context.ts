/** What every fs tool shares: its Config, the per-session reads, test hooks, and each call's scope. */

import { resolve } from 'node:path'
import type { ToolRun } from '@rein/tools'
import type { WriteHooks } from './atomic-write.ts'
import type { FsConfig } from './config.ts'
import { FileReads, FileReadsStore } from './file-reads.ts'
import { openScope, type Scope } from './workspace.ts'

declare module '@rein/tools' {
  interface ToolRunFields {
    /** @rein/tool-fs: the files this session has read or written, for read-before-write. */
    fileReads: FileReads
  }
}

/** How the tools are built: `createFsTools(options)`. */
export interface FsToolOptions {
  config: FsConfig
  /** Where sessions' reads are kept; share it with the `fileReads` provider. Default: a new store. */
  reads?: FileReadsStore
  /** For tests only: points inside a write where a test can step in. */
  hooks?: WriteHooks
  /** The registry's limit on one call's arguments (`maxArgumentBytes`), which bounds what `write` can carry. */
  maxArgumentBytes?: number
}

export interface FsToolContext {
  config: FsConfig
  reads: FileReadsStore
  hooks: WriteHooks
  maxArgumentBytes: number | undefined
}

export function toolContext(options: FsToolOptions): FsToolContext {
  return { config: options.config, reads: options.reads ?? new FileReadsStore(), hooks: options.hooks ?? {}, maxArgumentBytes: options.maxArgumentBytes }
}

/** The root this call works in: Config's, else the run's. */
export function callScope(context: FsToolContext, run: ToolRun): Promise<Scope> {
  const root = context.config.workspaceRoot === undefined ? run.workspaceRoot : resolve(context.config.workspaceRoot)
  return openScope(root, run.spillFolder)
}

/** The session's reads: the provider's field when loaded, else the tools' own store. */
export function readsOf(context: FsToolContext, run: ToolRun): FileReads {
  return run.fileReads ?? context.reads.for(run.sessionId ?? '')
}
