/**
 * Retention: which of a session's turns keep their checkpoints. Pure — records, the policy, the
 * time and the store's sizes in; the anchors to keep, and why the others go, out.
 */

import type { CheckpointRecord, CheckpointSize } from './types.ts'

const DAY_MS = 24 * 60 * 60 * 1000

/** The Config fields retention reads. */
export interface RetentionPolicy {
  readonly keepTurns: number
  readonly keepDays: number
  readonly maxSessionBytes: number
}

/** What retention keeps, and which anchors go by which rule (oldest first). */
export interface RetentionPlan {
  readonly keep: ReadonlySet<string>
  readonly dropped: { readonly turns: readonly string[]; readonly days: readonly string[]; readonly size: readonly string[] }
  /** The highest `seq` planned over: a record made after it is not the plan's to drop (`CompactOptions.seenThrough`). */
  readonly seenThrough: number
}

/** Turns whose records interleave (a background job's changes landing in a later turn): kept or dropped together. */
interface Block {
  anchors: string[]
  records: CheckpointRecord[]
  lastSeq: number
  newestAt: number
}

/**
 * Keeps the newest `keepTurns` turns (in the order of their first record) that are younger than
 * `keepDays` (by their newest record's `at`), then, when `size` is known, drops the oldest kept
 * turn while the rest would take more than `maxSessionBytes` — never the newest. What is kept is
 * always every turn from some point on: rewinding to a kept turn undoes every later record, so
 * those must all be there.
 */
export function planRetention(records: readonly CheckpointRecord[], policy: RetentionPolicy, now: number, size?: CheckpointSize): RetentionPlan {
  const blocks = blocksOf(records)
  const dropped = { turns: [] as string[], days: [] as string[], size: [] as string[] }
  // 0 days: no age limit (not "drop everything", which would take the newest turn too).
  const oldest = policy.keepDays > 0 ? now - policy.keepDays * DAY_MS : -Infinity
  let start = blocks.length
  let turns = 0
  let stop: 'turns' | 'days' | undefined
  while (start > 0) {
    const block = blocks[start - 1]
    if (!block) break
    stop = turns >= policy.keepTurns ? 'turns' : block.newestAt < oldest ? 'days' : undefined
    if (stop) break
    turns += block.anchors.length
    start--
  }
  if (stop) for (const block of blocks.slice(0, start)) dropped[stop].push(...block.anchors)
  if (size) start = capBySize(blocks, start, size, policy.maxSessionBytes, dropped.size)
  const keep = new Set(blocks.slice(start).flatMap((block) => block.anchors))
  return Object.freeze({ keep, dropped, seenThrough: records.reduce((highest, record) => Math.max(highest, record.seq), 0) })
}

/** The blocks in order: anchors by first record, merged while one starts before the previous ends. */
function blocksOf(records: readonly CheckpointRecord[]): Block[] {
  const anchors = new Map<string, CheckpointRecord[]>()
  for (const record of [...records].sort((a, b) => a.seq - b.seq)) {
    const list = anchors.get(record.anchor)
    if (list) list.push(record)
    else anchors.set(record.anchor, [record])
  }
  const blocks: Block[] = []
  for (const [anchor, list] of anchors) {
    const first = list[0]!.seq
    const last = list.at(-1)!.seq
    const newestAt = Math.max(...list.map((record) => record.at))
    const previous = blocks.at(-1)
    if (previous && first < previous.lastSeq) {
      previous.anchors.push(anchor)
      previous.records.push(...list)
      previous.lastSeq = Math.max(previous.lastSeq, last)
      previous.newestAt = Math.max(previous.newestAt, newestAt)
    } else {
      blocks.push({ anchors: [anchor], records: [...list], lastSeq: last, newestAt })
    }
  }
  return blocks
}

/** Moves `start` past the oldest kept blocks while what stays would exceed `max` bytes; the newest block stays. */
function capBySize(blocks: readonly Block[], start: number, size: CheckpointSize, max: number, dropped: string[]): number {
  // What stays after compaction: the kept records' lines and each content they name, once.
  const uses = new Map<string, number>()
  let bytes = 0
  const count = (block: Block, step: 1 | -1) => {
    for (const record of block.records) {
      bytes += step * recordBytes(record)
      for (const hash of [record.before, record.after]) {
        if (hash === null) continue
        const before = uses.get(hash) ?? 0
        uses.set(hash, before + step)
        // A content counts while at least one kept record names it.
        if (before === 0 || before + step === 0) bytes += step * (size.contents.get(hash) ?? 0)
      }
    }
  }
  for (const block of blocks.slice(start)) count(block, 1)
  while (bytes > max && start < blocks.length - 1) {
    const block = blocks[start]!
    count(block, -1)
    dropped.push(...block.anchors)
    start++
  }
  return start
}

/** About what a record's line takes in a log. */
function recordBytes(record: CheckpointRecord): number {
  return Buffer.byteLength(JSON.stringify(record)) + 1
}
