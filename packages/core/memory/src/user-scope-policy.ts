/**
 * A pre-execute policy that asks before a tool call changes user-scope memory. Every project's
 * sessions read those entries, so a note planted by text the agent read in one workspace (a
 * hostile README, say) would follow the person everywhere: allowing `write` for this workspace
 * (`--allow write`) must not be enough. The registry passes the reason as the request's `policy`,
 * which approvers that allow by effect do not answer.
 */

import type { PreExecuteDecision, ToolCall } from '@rein/tools'
import type { MemoryEntry } from './types.ts'

/** The reason the person reads. */
const USER_SCOPE_REASON = 'it changes user memory, which every project\'s sessions read'

/** What the policy needs from the service. */
export interface PolicySource {
  get(id: string): Promise<MemoryEntry | undefined>
}

/** Asks for `memory_write` to the user scope, and `memory_update` / `memory_forget` of a user entry. */
export function userScopePolicy(memory: PolicySource): (call: ToolCall) => Promise<PreExecuteDecision | undefined> {
  const ask: PreExecuteDecision = Object.freeze({ kind: 'ask', reason: USER_SCOPE_REASON })
  return async (call) => {
    const { toolName, args } = call
    if (toolName === 'memory_write') return args.scope === 'user' ? ask : undefined
    if (toolName !== 'memory_update' && toolName !== 'memory_forget') return undefined
    // An id that names nothing is the tool's to refuse (MEMORY_NOT_FOUND).
    const entry = typeof args.id === 'string' ? await memory.get(args.id) : undefined
    return entry?.scope === 'user' ? ask : undefined
  }
}
