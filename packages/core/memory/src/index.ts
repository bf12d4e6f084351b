/**
 * @rein/memory: the `ctx.memory` seam — what an agent remembers across sessions, in the user and
 * project scopes. (Service, tools and prompt section: in progress.)
 */

/** The scope of an entry: `user` or `project`. */
export type { MemoryScope } from './types.ts'
/** The kind of an entry: fact, preference, decision, episode or procedure. */
export type { MemoryType } from './types.ts'
/** The session (and message) an entry came from. */
export type { MemorySource } from './types.ts'
/** One remembered thing, as stored. */
export type { MemoryEntry } from './types.ts'
/** What a writer gives `write`. */
export type { MemoryDraft } from './types.ts'
/** What `update` may change. */
export type { MemoryPatch } from './types.ts'
/** A recall's scopes, project, query, types and limit. */
export type { RecallQuery } from './types.ts'
/** What `write` did: added, or refreshed a duplicate. */
export type { WriteResult } from './types.ts'
/** The store seam: insert, replace, get, findSame, recall, delete, all. */
export type { MemoryStore } from './types.ts'
/** The form contents are compared in to find duplicates. */
export { normalizeContent } from './normalize.ts'
