/**
 * `rein rewind --fork`: a new session whose log is the original's events before a turn, so the
 * conversation goes back with the files. The original is only read.
 */

import type { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { eventData, type ContextCompacted, type SessionEvent, type SessionHeader } from '@rein/session'

export interface ForkReport {
  sessionId: string
  /** Events copied. */
  copied: number
  /** Ignorable events of types no loaded plugin defines: bookkeeping the model never saw, left out. */
  dropped: number
}

/**
 * Creates a session in the same working directory and appends, in order, every event before
 * `beforeSeq` (each keeps its type, data and `ignorable` mark; seq and time are the new log's),
 * then `session/forked`. Durable when it resolves.
 */
export async function forkSession(ctx: Context, header: SessionHeader, events: readonly SessionEvent[], beforeSeq: number): Promise<ForkReport> {
  const fork = await ctx.sessions.create({ cwd: header.cwd })
  let copied = 0
  let dropped = 0
  // Old seq → new seq of every event copied: a compaction names its range by seq.
  const seqs = new Map<number, number>()
  try {
    for (const event of events) {
      if (event.seq >= beforeSeq) break
      try {
        const seq = fork.events.length
        if (event.type === 'context/compacted') fork.append('context/compacted', renumbered(eventData(event, 'context/compacted'), seqs))
        else fork.append(event.type, event.data, event.ignorable ? { ignorable: true } : {})
        // Only once copied: a dropped event's seq would name the next event copied, which a range ending at it must not cover.
        seqs.set(event.seq, seq)
        copied++
      } catch (error) {
        // The original loaded, so only an ignorable event can be of a type nothing here defines.
        if (!event.ignorable || !isReinError(error, 'UNKNOWN_EVENT_TYPE')) throw error
        dropped++
      }
    }
    // Where the copy ends: the spending before it was the original's (see `spending`).
    fork.append('session/forked', { fromSessionId: header.id, beforeSeq })
    await fork.flush()
  } finally {
    await fork.close()
  }
  return { sessionId: fork.id, copied, dropped }
}

/**
 * A compaction's summarized range (and the message it kept) in the fork's seqs: the copied events
 * it covered (only dropped bookkeeping is missing).
 */
function renumbered(data: ContextCompacted, seqs: ReadonlyMap<number, number>): ContextCompacted {
  if (!data.summary) return data
  const { fromSeq, toSeq, keptSeq, ...rest } = data.summary
  const covered = [...seqs].filter(([old]) => old >= fromSeq && old <= toSeq).map(([, now]) => now)
  const first = covered[0]
  const last = covered.at(-1)
  if (first === undefined || last === undefined) return data
  const kept = keptSeq === undefined ? undefined : seqs.get(keptSeq)
  return { ...data, summary: { ...rest, fromSeq: first, toSeq: last, ...(kept !== undefined ? { keptSeq: kept } : {}) } }
}
