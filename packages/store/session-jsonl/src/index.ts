/**
 * @rein/session-jsonl: a durable `SessionStore` — one JSONL file per session, fsynced batches,
 * atomic publication of new sessions, pid lock files.
 */

export { name, inject, Config, apply, defaultSessionRoot, resolveStoreOptions } from './plugin.ts'
export { JsonlSessionStore, type JsonlSessionStoreOptions } from './jsonl-store.ts'
export { SESSION_FILE_KIND } from './jsonl-format.ts'
