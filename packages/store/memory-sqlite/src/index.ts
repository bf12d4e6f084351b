/**
 * @rein/memory-sqlite: a `MemoryStore` in one SQLite file — full-text ranking (FTS5, BM25) for
 * recall's query, expiry, WAL for several processes, schema migrations.
 */

/** The plugin (load with `name: '@rein/memory-sqlite'`): its name, inject, Config and apply. */
export { name, inject, Config, apply } from './plugin.ts'
/** `$REIN_HOME/memory.db`, else `~/.rein/memory.db`. */
export { defaultMemoryFile } from './plugin.ts'
/** The store, for use without cordis: `await SqliteMemoryStore.open({ file })`. */
export { SqliteMemoryStore, DEFAULT_BUSY_TIMEOUT_MS, type SqliteMemoryStoreOptions } from './sqlite-store.ts'
/** The schema version this build reads and writes (`PRAGMA user_version`). */
export { SCHEMA_VERSION } from './schema.ts'
/** The codes the store raises. */
export type { MemoryStoreErrorCode } from './errors.ts'
