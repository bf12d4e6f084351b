/**
 * A pre-execute policy that asks before a tool call changes user-scope memory. Every project's
 * sessions read those entries, so a note planted by text the agent read in one workspace (a
 * hostile README, say) would follow the person everywhere: allowing `write` for this workspace
 * (`--allow write`) must not be enough. The registry passes the reason as the request's `policy`,
 * which approvers that allow by effect do not answer. The reason shows what changes, so the person
 * answers about the text, not about a tool name.
 */

import type { PreExecuteDecision, ToolCall } from '@rein/tools'
import { clip, oneLine } from './format.ts'
import type { MemoryEntry } from './types.ts'

/** Most characters of one content the reason quotes. */
const QUOTED_CHARS = 300

/** What the policy needs from the service. */
export interface PolicySource {
  get(id: string): Promise<MemoryEntry | undefined>
}

/**
 * Asks for `memory_write` to the user scope or superseding a user entry, and `memory_update` /
 * `memory_forget` of a user entry.
 */
export function userScopePolicy(memory: PolicySource): (call: ToolCall) => Promise<PreExecuteDecision | undefined> {
  return async (call) => {
    const reason = await reasonFor(memory, call)
    return reason === undefined ? undefined : { kind: 'ask', reason: oneLine(reason) }
  }
}

/** What the call would change in user memory, as the person reads it, or `undefined` when it changes none. */
async function reasonFor(memory: PolicySource, { toolName, args }: ToolCall): Promise<string | undefined> {
  if (toolName !== 'memory_write' && toolName !== 'memory_update' && toolName !== 'memory_forget') return undefined
  // An id that names nothing is the tool's to refuse (MEMORY_NOT_FOUND).
  const id = toolName === 'memory_write' ? args.supersedes : args.id
  const entry = typeof id === 'string' ? await memory.get(id) : undefined
  const old = entry?.scope === 'user' ? entry : undefined
  if (toolName === 'memory_write') {
    const retires = old === undefined ? '' : `, and retires ${old.id}: ${quote(old.content)}`
    if (args.scope === 'user') return `it saves to user memory, which every project's sessions read: ${quote(args.content)}${retires}`
    return old === undefined ? undefined : `it retires user memory ${old.id}, which every project's sessions read: ${quote(old.content)}`
  }
  if (old === undefined) return undefined
  if (toolName === 'memory_forget') return `it deletes user memory ${old.id}: ${quote(old.content)}`
  const content = typeof args.content === 'string' ? quote(args.content) : 'the same content'
  const type = typeof args.type === 'string' && args.type !== old.type ? `, and its type ${old.type} → ${args.type}` : ''
  return `it rewrites user memory ${old.id}: ${quote(old.content)} → ${content}${type}`
}

function quote(text: unknown): string {
  return `"${clip(typeof text === 'string' ? text : '', QUOTED_CHARS)}"`
}
