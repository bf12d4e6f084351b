/**
 * @rein/tool-fs: the workspace file tools — read, write, edit, multi_edit, glob, grep — kept inside
 * a workspace root, with read-before-write. Load it beside `@rein/tools`.
 */

import type { Context } from '@deepseek-ai/cordis'
import { checkWorkspaceRoot, FsConfig } from './config.ts'
import { FileReadsStore } from './file-reads.ts'
import { createFsTools, registerFsTools } from './tools.ts'

/** The plugin's name in a composition. */
export const name = 'tool-fs'
/** Needs the tool registry. */
export const inject = ['tools']

/** Where the tools may work and how much they return; see the README's Config table. */
export type Config = FsConfig
/** The Config schema, with every default. */
export const Config = FsConfig

/** Registers the tools and provides `fileReads` on every tool run; all of it leaves with the plugin. */
export const apply = (ctx: Context, config: Config) => {
  checkWorkspaceRoot(config)
  const reads = new FileReadsStore()
  ctx.tools.contribute('fileReads', (call) => reads.for(call.sessionId ?? ''))
  registerFsTools(ctx.tools, createFsTools({ config, reads, maxArgumentBytes: ctx.tools.config.maxArgumentBytes }))
}

/** Builds the tool definitions without cordis, for hosts that register them themselves. */
export { createFsTools, registerFsTools, type FsTools } from './tools.ts'
/** Options of `createFsTools`. */
export type { FsToolOptions } from './tool-context.ts'
/** Config fills in its defaults from a partial object. */
export { resolveFsConfig } from './config.ts'
/** Read-before-write state: per session, per real path; the `fileReads` tool-run field. */
export { FileReads, FileReadsStore, type FileSnapshot } from './file-reads.ts'
/** Every code tool-fs raises. */
export type { FsErrorCode } from './errors.ts'
/** Test points inside a write (`createFsTools({hooks})`); not for production use. */
export type { WriteHooks } from './atomic-write.ts'
