/**
 * @rein/checkpoint: the `ctx.checkpoints` service — file changes recorded before covered tools
 * make them, and rewind of a session's files to their state before a turn.
 */

import { CheckpointService } from './service.ts'

/** The plugin: `ctx.checkpoints`, loaded with `name: '@rein/checkpoint'`. */
export default CheckpointService
/** The `ctx.checkpoints` service class (the default export), for typing and `ctx.plugin`. */
export { CheckpointService } from './service.ts'
/** `rewind`'s options: the caller's open session, and whether to tell the conversation. */
export type { RewindOptions } from './service.ts'
/** `plan`'s options: whether to read back the contents a rewind would write. */
export type { PlanOptions } from './service.ts'
/** The plugin's Config schema and type (see the README's Config table). */
export { CheckpointConfig } from './config.ts'
/** A store that keeps checkpoints in memory (tests, or no undo across restarts). */
export { MemoryCheckpointStore } from './memory-store.ts'
/** The sha256 (hex) of some content, as records name contents; and a check of that form. */
export { contentHash, isContentHash } from './hash.ts'
/** A file change as a tool reports it, contents as bytes. */
export type { FileChange } from './types.ts'
/** A file change with the turn it belongs to, as stores take it. */
export type { CheckpointEntry } from './types.ts'
/** A durable record: the change with contents as hashes and its `seq`. */
export type { CheckpointRecord } from './types.ts'
/** What a store's `compact` dropped. */
export type { CompactReport } from './types.ts'
/** `compact`'s options: records made after the caller chose what to keep stay. */
export type { CompactOptions } from './types.ts'
/** What a store's `size` reports: its bytes, and each content's size by hash. */
export type { CheckpointSize } from './types.ts'
/** The store seam: append durably, list records, read contents by hash. */
export type { CheckpointStore } from './types.ts'
/** What rewind does to one file: `restore`, `remove`, `already`, `drifted` or `skipped`. */
export type { PlanAction } from './types.ts'
/** One file in a rewind plan. */
export type { PlanItem } from './types.ts'
/** What rewind does with the permissions of a file whose records changed them. */
export type { PlanPermissions } from './types.ts'
/** A folder a write made for a file that goes back to absent, and whether rewind removes it. */
export type { PlanFolder } from './types.ts'
/** What `plan` returns. */
export type { RewindPlan } from './types.ts'
/** A command of the rewound turns a kill cut off, which left no records: what it changed is not undone. */
export type { CutOffCommand } from './types.ts'
/** A file rewind could not restore, with the error. */
export type { FailedItem } from './types.ts'
/** What `rewind` returns, by outcome. */
export type { RewindResult } from './types.ts'
/** `run.checkpoint` in a tool body: records a change bound to the call's session and turn. */
export type { CheckpointHandle } from './types.ts'
