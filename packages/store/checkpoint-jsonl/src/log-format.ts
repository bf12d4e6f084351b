/**
 * The log's lines: one JSON record each, after an optional first line a compaction writes (the
 * highest `seq` ever given). A record's newline is written with it, so only a last line without
 * its newline can be a write a crash cut short: one that is not JSON is dropped, one that is is
 * read like any line. Any line that ends in its newline and is not a record is damage.
 */

import { ReinError } from '@rein/base'
import { isContentHash, type CheckpointRecord } from '@rein/checkpoint'

const NEWLINE = 0x0a
/** What `parseJson` gives for text that is not JSON (a torn line, or damage). */
const NOT_JSON = Symbol('not JSON')

/**
 * What a log's bytes hold: the records, the highest `seq` ever given, and how many bytes hold
 * them: shorter than the bytes only when a torn last line was dropped (the store cuts it before
 * its next append, never on a read).
 */
export interface ParsedLog {
  records: CheckpointRecord[]
  lastSeq: number
  /** The anchors compactions dropped records of (from the marker). */
  pruned: ReadonlySet<string>
  validBytes: number
  /** The last line is a whole record (or marker) without its newline: the next append ends the line first. */
  unterminated: boolean
}

/** What a compaction's marker keeps: the highest `seq` ever given, and the anchors it and earlier ones dropped. */
export interface Marker {
  lastSeq: number
  pruned: ReadonlySet<string>
  /** How many records the compaction kept behind it; a marker from before this was kept has none. */
  records?: number
}

/**
 * The records in a log's bytes (see `ParsedLog`); `CHECKPOINT_LOG_DAMAGED` names the file and the
 * first bad line. Records are numbered without gaps (a compaction's marker says how many it kept
 * of those before it), so whole lines missing from the start or the middle are damage; whole
 * lines missing from the end only `recordedThrough` can reveal: the highest `seq` the store's
 * witness says it made durable (see `last-seq.ts`), when it has one.
 */
export function parseLog(text: Buffer, file: string, recordedThrough?: number): ParsedLog {
  const records: CheckpointRecord[] = []
  let lastSeq = 0
  let pruned: ReadonlySet<string> = new Set()
  let compacted: Marker | undefined
  let start = 0
  let unterminated = false
  let lineNumber = 1
  for (; start < text.length; lineNumber++) {
    const newline = text.indexOf(NEWLINE, start)
    const end = newline < 0 ? text.length : newline
    const line = text.subarray(start, end).toString('utf8')
    // A last line without its newline that is not JSON is a write a crash cut short: its record never resolved, so it is dropped.
    if (newline < 0 && parseJson(line) === NOT_JSON) break
    const marker = start === 0 ? parseMarker(line) : undefined
    const record = marker === undefined ? parseRecord(line) : undefined
    if (marker === undefined && !record) throw damaged(file, lineNumber, start, 'not a checkpoint record')
    if (record) {
      const previous = records.at(-1)
      if (previous && record.seq <= previous.seq) throw damaged(file, lineNumber, start, `record ${record.seq} after ${previous.seq}`)
      const expected = expectedSeq(record, previous, compacted)
      if (expected !== undefined && record.seq !== expected) throw damaged(file, lineNumber, start, `${missing(expected, record.seq - 1)} (lines were taken out of the log)`)
      records.push(record)
    }
    if (marker) {
      compacted = marker
      pruned = marker.pruned
    }
    lastSeq = Math.max(lastSeq, marker?.lastSeq ?? record?.seq ?? 0)
    unterminated = newline < 0
    start = newline < 0 ? text.length : newline + 1
  }
  const kept = compacted?.records
  const keptLeft = compacted ? records.filter((record) => record.seq <= compacted.lastSeq).length : 0
  if (kept !== undefined && keptLeft !== kept) {
    throw damaged(file, 1, 0, `the compaction that wrote this log kept ${kept} record${kept === 1 ? '' : 's'}; ${keptLeft} ${keptLeft === 1 ? 'is' : 'are'} left (the log was cut short)`)
  }
  if (recordedThrough !== undefined && recordedThrough > lastSeq) {
    throw damaged(file, lineNumber, start, `${missing(lastSeq + 1, recordedThrough)}: rein recorded through ${recordedThrough}, and the log ends before (it was cut short), so a rewind would leave what they changed`)
  }
  return { records, lastSeq, pruned, validBytes: start, unterminated }
}

/**
 * The `seq` `record` must have after `previous`: one more, as the store numbers them (the first one
 * 1), and after a compaction one more than its marker's highest. A record the compaction kept (at
 * or below that) may follow a gap, the records it dropped: the marker counts those it kept.
 */
function expectedSeq(record: CheckpointRecord, previous: CheckpointRecord | undefined, compacted: Marker | undefined): number | undefined {
  const base = compacted?.lastSeq ?? 0
  if (compacted !== undefined && record.seq <= base) return undefined
  return Math.max(previous?.seq ?? 0, base) + 1
}

/** `records 3 to 4 are missing`, or `record 3 is missing`. */
function missing(from: number, to: number): string {
  return from === to ? `record ${from} is missing` : `records ${from} to ${to} are missing`
}

function damaged(file: string, line: number, offset: number, problem: string): ReinError {
  return new ReinError('CHECKPOINT_LOG_DAMAGED', `${file}:${line}: ${problem}; rein leaves the file as it is — move it aside to start the session's checkpoints afresh`, { details: { file, line, offset } })
}

/**
 * What a build from before `removedFolder` lines reports for one (as a gap): that it cannot make the
 * folder again. This build reads the field instead, and the gap means nothing to it.
 */
const REMOVED_FOLDER_GAP = 'an empty folder a command removed; this rein cannot make it again (a newer one can)'

/**
 * One line for `record`, newline included. An empty folder a command removed (`folder` that
 * `existed`) is written as `removedFolder` with a gap, not as `folder`: a build that knows `folder`
 * but not this takes a folder line that existed for damage (and then loads none of the session's
 * records); every older build reads the gap instead, and reports the folder as not restored.
 */
export function formatRecord(record: CheckpointRecord): Buffer {
  const { anchor, seq, root, path, existed, before, after, at, by, gap, mode, modeAfter, createdFolders, folder } = record
  const removed = folder === true && existed
  const line = removed
    ? { anchor, seq, root, path, existed, before, after, at, by, gap: REMOVED_FOLDER_GAP, mode, removedFolder: true }
    : { anchor, seq, root, path, existed, before, after, at, by, gap, mode, modeAfter, createdFolders, folder }
  return Buffer.from(`${JSON.stringify(line)}\n`)
}

/**
 * The first line of a compacted log: the highest `seq` ever given, so the next record does not
 * reuse the number of one compaction dropped (even when it dropped them all), and the anchors
 * dropped so far, so a rewind to before one of them is known to be partial.
 */
export function formatMarker(marker: Marker, at: number): Buffer {
  return Buffer.from(`${JSON.stringify({ compacted: { lastSeq: marker.lastSeq, at, pruned: [...marker.pruned], records: marker.records } })}\n`)
}

/** The marker, or `undefined` when the line is not one. A marker from before `pruned` was kept has none. */
function parseMarker(line: string): Marker | undefined {
  const compacted = jsonObject(line)?.compacted
  if (typeof compacted !== 'object' || compacted === null) return undefined
  const { lastSeq, pruned, records } = compacted as Record<string, unknown>
  if (typeof lastSeq !== 'number' || !Number.isSafeInteger(lastSeq) || lastSeq < 0) return undefined
  // `records` is optional: a marker from before it was kept has none, and is read without that check.
  if (records !== undefined && !(typeof records === 'number' && Number.isSafeInteger(records) && records >= 0 && records <= lastSeq)) return undefined
  const kept = records === undefined ? {} : { records }
  return { lastSeq, pruned: new Set(Array.isArray(pruned) ? pruned.filter((anchor): anchor is string => typeof anchor === 'string') : []), ...kept }
}

function parseRecord(line: string): CheckpointRecord | undefined {
  const value = jsonObject(line)
  if (value === undefined) return undefined
  // `mode`, `modeAfter`, `createdFolders`, `folder` and `removedFolder` are optional: lines written before they were recorded have none, and still load.
  const { anchor, seq, root, path, existed, before, after, at, by, gap, mode, modeAfter, createdFolders, folder, removedFolder } = value
  const hash = (field: unknown) => field === null || (typeof field === 'string' && isContentHash(field))
  if (typeof anchor !== 'string' || typeof root !== 'string' || typeof path !== 'string' || typeof existed !== 'boolean') return undefined
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || !hash(before) || !hash(after)) return undefined
  if (typeof at !== 'number' || (by !== undefined && typeof by !== 'string') || (gap !== undefined && typeof gap !== 'string')) return undefined
  if (mode !== undefined && !isPermissionBits(mode)) return undefined
  // The bits a change of permissions left: only beside the bits before it, and never on a folder's line.
  if (modeAfter !== undefined && (!isPermissionBits(modeAfter) || mode === undefined || folder !== undefined || removedFolder !== undefined)) return undefined
  if (createdFolders !== undefined && !isCount(createdFolders)) return undefined
  // A folder a command made: no contents, and nothing that only a file has.
  if (folder !== undefined && (folder !== true || existed || before !== null || after !== null || mode !== undefined || gap !== undefined)) return undefined
  // An empty folder a command removed: no contents, a gap for older builds (see `formatRecord`), not also `folder`.
  if (removedFolder !== undefined && (removedFolder !== true || !existed || before !== null || after !== null || folder !== undefined || createdFolders !== undefined)) return undefined
  const common = { anchor, seq, root, path, existed, before: before as string | null, after: after as string | null, at, ...(by === undefined ? {} : { by }), ...(mode === undefined ? {} : { mode }) }
  if (removedFolder === true || isCompactedRemovedFolder(value)) return Object.freeze({ ...common, folder: true as const })
  return Object.freeze({
    ...common, ...(modeAfter === undefined ? {} : { modeAfter }), ...(gap === undefined ? {} : { gap }),
    ...(createdFolders === undefined ? {} : { createdFolders }), ...(folder === true ? { folder } : {}),
  })
}

/**
 * A removed folder's line that a build from before `removedFolder` compacted: it kept the line
 * without that field, gap and all. Read as a gap it would hold back a file at that path too.
 */
function isCompactedRemovedFolder({ removedFolder, gap, existed, before, after, folder, createdFolders }: Record<string, unknown>): boolean {
  return removedFolder === undefined && gap === REMOVED_FOLDER_GAP && existed === true && before === null && after === null && folder === undefined && createdFolders === undefined
}

function isPermissionBits(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0o7777
}

/** A number of folders a write made: a whole number from 1 (none is written as no field). */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1
}

/** The line as a JSON object, or `undefined` when it is not one (not JSON, or another shape). */
function jsonObject(line: string): Record<string, unknown> | undefined {
  const value = parseJson(line)
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown
  } catch {
    return NOT_JSON
  }
}
