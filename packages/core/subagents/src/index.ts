/**
 * @rein/subagents: the `ctx.subagents` service — the `subagent` tool, which hands a task to a child
 * agent in its own session linked to the caller's, bounded in depth and tools.
 */

import { SubagentService } from './service.ts'

/** The plugin: `ctx.subagents`, loaded with `name: '@rein/subagents'`. */
export default SubagentService
/** The `ctx.subagents` service class (the default export), for typing and `ctx.plugin`. */
export { SubagentService } from './service.ts'
/** The plugin's Config schema and type (see the README's Config table). */
export { SubagentsConfig } from './config.ts'
/** A named kind of subagent from Config `profiles`. */
export type { SubagentProfile } from './config.ts'
/** One delegation, the call it comes from, and the child's answer. */
export type { SubagentRequest, SubagentResult, DelegatingCall } from './types.ts'
