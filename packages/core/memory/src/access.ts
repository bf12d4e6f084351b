/**
 * Which scopes a run may read and write: the live agent's `options.memory`, else the row's
 * `agents[name]`, else its `scopes`; none for subagents by default. The tools' `availableTo`, their
 * checks and the prompt section all ask here, so what an agent sees and what it may do agree.
 */

import type { RunIdentity } from '@rein/tools'
import type { MemoryConfig, MemoryScopes } from './config.ts'
import type { AgentsLike } from './section.ts'
import type { MemoryEntry, MemoryScope } from './types.ts'

/**
 * A run's scopes, frozen, field by field: the run's live agent's `options.memory` (looked up by
 * session in `ctx.agents`), else the row's `agents[identity.agent]`, else `scopes`. A subagent
 * (depth > 0) whose own options name no memory gets none, unless Config `subagents` is true; a
 * field its options leave out is then none too. A call without an identity gets `scopes`.
 */
export function accessFor(config: MemoryConfig, identity: RunIdentity | undefined, agents?: () => AgentsLike | undefined): Readonly<MemoryScopes> {
  if (identity === undefined) return Object.freeze({ read: [...config.scopes.read], write: [...config.scopes.write] })
  const options = agents?.()?.find?.(identity.sessionId)?.options?.memory
  const subagent = identity.depth > 0 && !config.subagents
  if (subagent && options === undefined) return Object.freeze({ read: [], write: [] })
  const row: MemoryScopes = subagent ? { read: [], write: [] } : { ...config.scopes, ...definedFields(ownEntry(config.agents, identity.agent)) }
  return Object.freeze({ read: [...(options?.read ?? row.read)], write: [...(options?.write ?? row.write)] })
}

/** Whether a run with these scopes, working in `projectId`, may see (or change) `entry`. */
export function reaches(entry: MemoryEntry, scopes: readonly MemoryScope[], projectId: string): boolean {
  return scopes.includes(entry.scope) && (entry.scope === 'user' || entry.projectId === projectId)
}

/** Not inherited from Object.prototype: an agent named `constructor` gets no special entry. */
function ownEntry(agents: MemoryConfig['agents'], name: string): Partial<MemoryScopes> | undefined {
  return Object.hasOwn(agents, name) ? agents[name] : undefined
}

/** The fields that are set: an absent one must fall back, not become `undefined`. */
function definedFields(entry: Partial<MemoryScopes> | undefined): Partial<MemoryScopes> {
  return { ...(entry?.read === undefined ? {} : { read: entry.read }), ...(entry?.write === undefined ? {} : { write: entry.write }) }
}
