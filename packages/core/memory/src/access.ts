/** Which scopes a run may read and write: the row's `scopes`, an agent's own, none for subagents by default. */

import type { RunIdentity } from '@rein/tools'
import type { MemoryConfig, MemoryScopes } from './config.ts'
import type { MemoryEntry, MemoryScope } from './types.ts'

/** A run's scopes, frozen. A call without an identity (not from an agent) gets the row's `scopes`. */
export function accessFor(config: MemoryConfig, identity: RunIdentity | undefined): Readonly<MemoryScopes> {
  if (identity !== undefined && identity.depth > 0 && !config.subagents) return Object.freeze({ read: [], write: [] })
  const own = identity === undefined ? undefined : ownEntry(config.agents, identity.agent)
  return Object.freeze({ read: own?.read ?? config.scopes.read, write: own?.write ?? config.scopes.write })
}

/** Whether a run with these scopes, working in `projectId`, may see (or change) `entry`. */
export function reaches(entry: MemoryEntry, scopes: readonly MemoryScope[], projectId: string): boolean {
  return scopes.includes(entry.scope) && (entry.scope === 'user' || entry.projectId === projectId)
}

/** Not inherited from Object.prototype: an agent named `constructor` gets no special entry. */
function ownEntry(agents: MemoryConfig['agents'], name: string): Partial<MemoryScopes> | undefined {
  return Object.hasOwn(agents, name) ? agents[name] : undefined
}
