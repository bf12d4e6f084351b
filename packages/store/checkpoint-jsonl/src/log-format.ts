/** The log's lines: one JSON record each. Loading drops a torn last line and refuses damage elsewhere. */

import { ReinError } from '@rein/base'
import { isContentHash, type CheckpointRecord } from '@rein/checkpoint'

/** The records in a log's bytes, and how many bytes of it are whole lines (a torn tail is cut there). */
export function parseLog(text: Buffer, file: string): { records: CheckpointRecord[]; validBytes: number } {
  const records: CheckpointRecord[] = []
  let start = 0
  while (start < text.length) {
    const end = text.indexOf(0x0a, start)
    // A line without its newline is a write a crash cut short: its record never resolved, so it is dropped.
    if (end < 0) break
    const line = text.subarray(start, end).toString('utf8')
    const record = parseRecord(line)
    if (!record) {
      const last = end + 1 >= text.length
      if (last) break
      throw new ReinError('CHECKPOINT_LOG_DAMAGED', `${file} has a damaged record at byte ${start}; move the file aside to start the session's checkpoints afresh`, { details: { file, offset: start } })
    }
    const previous = records.at(-1)
    if (previous && record.seq <= previous.seq) {
      throw new ReinError('CHECKPOINT_LOG_DAMAGED', `${file} has record ${record.seq} after ${previous.seq}; move the file aside to start the session's checkpoints afresh`, { details: { file, offset: start } })
    }
    records.push(record)
    start = end + 1
  }
  return { records, validBytes: start }
}

/** One line for `record`, newline included. */
export function formatRecord(record: CheckpointRecord): Buffer {
  const { anchor, seq, root, path, existed, before, after, at, by, gap } = record
  return Buffer.from(`${JSON.stringify({ anchor, seq, root, path, existed, before, after, at, by, gap })}\n`)
}

function parseRecord(line: string): CheckpointRecord | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const { anchor, seq, root, path, existed, before, after, at, by, gap } = value as Record<string, unknown>
  const hash = (field: unknown) => field === null || (typeof field === 'string' && isContentHash(field))
  if (typeof anchor !== 'string' || typeof root !== 'string' || typeof path !== 'string' || typeof existed !== 'boolean') return undefined
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1 || !hash(before) || !hash(after)) return undefined
  if (typeof at !== 'number' || (by !== undefined && typeof by !== 'string') || (gap !== undefined && typeof gap !== 'string')) return undefined
  return Object.freeze({
    anchor, seq, root, path, existed, before: before as string | null, after: after as string | null, at,
    ...(by === undefined ? {} : { by }), ...(gap === undefined ? {} : { gap }),
  })
}
