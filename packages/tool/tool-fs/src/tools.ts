/** Builds the fs tools from Config: all six, or only the read-only three. */

import type { ToolDefinition, ToolRegistry } from '@rein/tools'
import { createEditTool, createMultiEditTool } from './edit-tools.ts'
import { createGlobTool } from './glob-tool.ts'
import { createGrepTool } from './grep-tool.ts'
import { createReadTool } from './read-tool.ts'
import { toolContext, type FsToolOptions } from './tool-context.ts'
import { createWriteTool } from './write-tool.ts'

/** The tool definitions, by tool name; the writing ones are absent in read-only mode. */
export interface FsTools {
  read: ReturnType<typeof createReadTool>
  glob: ReturnType<typeof createGlobTool>
  grep: ReturnType<typeof createGrepTool>
  write?: ReturnType<typeof createWriteTool>
  edit?: ReturnType<typeof createEditTool>
  multi_edit?: ReturnType<typeof createMultiEditTool>
}

/** The tools for `options.config`, sharing one store of sessions' reads (`options.reads`, else a new one). */
export function createFsTools(options: FsToolOptions): FsTools {
  const context = toolContext(options)
  const reading = { read: createReadTool(context), glob: createGlobTool(context), grep: createGrepTool(context) }
  if (options.config.readOnly) return reading
  return { ...reading, write: createWriteTool(context), edit: createEditTool(context), multi_edit: createMultiEditTool(context) }
}

/** Registers every tool `tools` holds on `registry` (each registration owned by the calling plugin). */
export function registerFsTools(registry: Pick<ToolRegistry, 'register'>, tools: FsTools): void {
  const register = <A, V>(tool: ToolDefinition<A, V> | undefined) => {
    if (tool) registry.register(tool)
  }
  register(tools.read)
  register(tools.glob)
  register(tools.grep)
  register(tools.write)
  register(tools.edit)
  register(tools.multi_edit)
}
