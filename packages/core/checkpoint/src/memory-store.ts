/** A checkpoint store in memory: for tests and for compositions that need no undo across restarts. */

import { ReinError } from '@rein/base'
import { contentHash } from './hash.ts'
import type { CheckpointEntry, CheckpointRecord, CheckpointStore } from './types.ts'

/** Keeps records and contents in memory; nothing survives the process. */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly _records = new Map<string, CheckpointRecord[]>()
  private readonly _blobs = new Map<string, Uint8Array>()

  async append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    const records = this._records.get(sessionId) ?? []
    const record: CheckpointRecord = Object.freeze({
      anchor: entry.anchor,
      seq: (records.at(-1)?.seq ?? 0) + 1,
      root: entry.root,
      path: entry.path,
      existed: entry.existed,
      before: this.keep(entry.before),
      after: this.keep(entry.after),
      at: Date.now(),
      ...(entry.by === undefined ? {} : { by: entry.by }),
      ...(entry.gap === undefined ? {} : { gap: entry.gap }),
    })
    records.push(record)
    this._records.set(sessionId, records)
    return record
  }

  async records(sessionId: string): Promise<readonly CheckpointRecord[]> {
    return [...(this._records.get(sessionId) ?? [])]
  }

  async blob(_sessionId: string, hash: string): Promise<Uint8Array> {
    const content = this._blobs.get(hash)
    if (!content) throw new ReinError('CHECKPOINT_BLOB_MISSING', `checkpoint content ${hash} is not in the store`, { details: { hash } })
    return Uint8Array.from(content)
  }

  private keep(content: Uint8Array | null): string | null {
    if (content === null) return null
    const hash = contentHash(content)
    if (!this._blobs.has(hash)) this._blobs.set(hash, Uint8Array.from(content))
    return hash
  }
}
