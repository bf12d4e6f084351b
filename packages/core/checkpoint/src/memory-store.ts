/** A checkpoint store in memory: for tests and for compositions that need no undo across restarts. */

import { ReinError } from '@rein/base'
import { contentHash } from './hash.ts'
import type { CheckpointEntry, CheckpointRecord, CheckpointSize, CheckpointStore, CompactOptions, CompactReport } from './types.ts'

/** Keeps records and contents in memory; nothing survives the process. */
export class MemoryCheckpointStore implements CheckpointStore {
  private readonly _records = new Map<string, CheckpointRecord[]>()
  /** The highest `seq` given per session: compaction may drop that record, the count goes on. */
  private readonly _lastSeq = new Map<string, number>()
  private readonly _blobs = new Map<string, Uint8Array>()
  /** The anchors compaction dropped records of, per session. */
  private readonly _pruned = new Map<string, Set<string>>()

  async append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    const records = this._records.get(sessionId) ?? []
    const seq = (this._lastSeq.get(sessionId) ?? 0) + 1
    const record: CheckpointRecord = Object.freeze({
      anchor: entry.anchor,
      seq,
      root: entry.root,
      path: entry.path,
      existed: entry.existed,
      before: this.keep(entry.before),
      after: this.keep(entry.after),
      at: Date.now(),
      ...(entry.by === undefined ? {} : { by: entry.by }),
      ...(entry.gap === undefined ? {} : { gap: entry.gap }),
      ...(entry.mode === undefined ? {} : { mode: entry.mode }),
      ...(entry.modeAfter === undefined ? {} : { modeAfter: entry.modeAfter }),
      ...(entry.createdFolders === undefined ? {} : { createdFolders: entry.createdFolders }),
      ...(entry.folder ? { folder: true as const } : {}),
    })
    records.push(record)
    this._records.set(sessionId, records)
    this._lastSeq.set(sessionId, seq)
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

  /** Drops the session's records of other anchors, then the contents no record of any session names (contents are shared). */
  async compact(sessionId: string, keepAnchors: ReadonlySet<string>, options: CompactOptions = {}): Promise<CompactReport> {
    const records = this._records.get(sessionId) ?? []
    const seenThrough = options.seenThrough ?? Number.POSITIVE_INFINITY
    const isKept = (record: CheckpointRecord) => keepAnchors.has(record.anchor) || record.seq > seenThrough
    const kept = records.filter(isKept)
    const dropped = records.filter((record) => !isKept(record))
    this._records.set(sessionId, kept)
    const pruned = this._pruned.get(sessionId) ?? new Set<string>()
    for (const record of dropped) pruned.add(record.anchor)
    this._pruned.set(sessionId, pruned)
    const named = new Set<string>()
    for (const list of this._records.values()) for (const record of list) for (const hash of [record.before, record.after]) if (hash !== null) named.add(hash)
    let droppedBlobs = 0
    let freedBytes = 0
    for (const [hash, content] of this._blobs) {
      if (named.has(hash)) continue
      this._blobs.delete(hash)
      droppedBlobs++
      freedBytes += content.length
    }
    for (const record of dropped) freedBytes += recordBytes(record)
    return Object.freeze({ droppedRecords: dropped.length, droppedAnchors: Object.freeze([...new Set(dropped.map((record) => record.anchor))]), droppedBlobs, freedBytes })
  }

  async pruned(sessionId: string): Promise<ReadonlySet<string>> {
    return new Set(this._pruned.get(sessionId))
  }

  /** The session's records (as JSON) and the contents they name. */
  async size(sessionId: string): Promise<CheckpointSize> {
    const contents = new Map<string, number>()
    let bytes = 0
    for (const record of this._records.get(sessionId) ?? []) {
      bytes += recordBytes(record)
      for (const hash of [record.before, record.after]) {
        const content = hash === null ? undefined : this._blobs.get(hash)
        if (hash === null || !content || contents.has(hash)) continue
        contents.set(hash, content.length)
        bytes += content.length
      }
    }
    return Object.freeze({ bytes, contents })
  }

  private keep(content: Uint8Array | null): string | null {
    if (content === null) return null
    const hash = contentHash(content)
    if (!this._blobs.has(hash)) this._blobs.set(hash, Uint8Array.from(content))
    return hash
  }
}

function recordBytes(record: CheckpointRecord): number {
  return Buffer.byteLength(JSON.stringify(record)) + 1
}
