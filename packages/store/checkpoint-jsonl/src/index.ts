/**
 * @rein/checkpoint-jsonl: a durable checkpoint store — an append-only JSONL log per session in the
 * session's folder, contents stored once by hash beside it.
 */

/** The plugin (load with `name: '@rein/checkpoint-jsonl'`): its name, inject, Config and apply. */
export { name, inject, Config, apply } from './plugin.ts'
/** The store, for use without cordis: give it `folder(sessionId)`. */
export { JsonlCheckpointStore, type JsonlCheckpointStoreOptions } from './jsonl-store.ts'
/** The file and folder names the store uses inside a session folder. */
export { LOG_FILE, BLOB_FOLDER } from './jsonl-store.ts'
