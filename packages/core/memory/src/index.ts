/**
 * @rein/memory: the `ctx.memory` service — what an agent remembers across sessions, in the user and
 * project scopes: validated writes, recall, the memory tools and a pinned prompt block.
 */

import { MemoryService } from './service.ts'

/** The plugin: `ctx.memory`, loaded with `name: '@rein/memory'`. */
export default MemoryService
/** The `ctx.memory` service class (the default export), for typing and `ctx.plugin`. */
export { MemoryService } from './service.ts'
/** The plugin's Config schema and type (see the README's Config table). */
export { MemoryConfig } from './config.ts'
/** Which scopes a run may read and write; the prompt block's limits. */
export type { MemoryScopes, MemoryPromptConfig } from './config.ts'
/** A store that keeps entries in memory (tests, or memory only while the process runs). */
export { InMemoryMemoryStore } from './in-memory-store.ts'
/** Every scope and every type, in the README's order. */
export { MEMORY_SCOPES, MEMORY_TYPES } from './validate.ts'
/** The prompt block's heading line, `## What you remember`. */
export { MEMORY_HEADING } from './prompt-block.ts'
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
/** How long ago a time was, as the memory tools say it: `3 days ago`. */
export { age as memoryAge } from './format.ts'
/** One line of at most `max` characters, `…` when cut: how an entry's content is shown. */
export { clip as clipLine } from './format.ts'
/** Whether a query holds a word the search can look for (a letter or digit once NFKC-normalized): what `recall` and `memory_search` require. */
export { hasWord } from './validate.ts'
