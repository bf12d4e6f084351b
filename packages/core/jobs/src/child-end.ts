/**
 * How a job a dead process left without an end really ended, when its `ref` names a session below
 * its owner's (a background subagent's): that session's log is written by the job's own agent, so
 * a run it shows ended is the job's end — the work was saved there even though the owner's log
 * never said so. A run still open or interrupted there is not an end: the job stays lost (and its
 * producer may continue that session).
 */

import { shorten } from '@rein/base'
import { eventData, type LoadedSession, type SessionEvent } from '@rein/session'
import type { EndData, LoggedJob } from './job-log.ts'

/** As long as a failed job's reason may be (the same as a live one's). */
const MAX_ERROR_CHARS = 1000

/** The end the child's log shows, without the owner's bookkeeping (`jobId`, `notice`, the result's cut). */
export type ChildEnd = Pick<EndData, 'status' | 'error' | 'result'>

/**
 * The end of `job` (owned by session `ownerId`) as `child`'s log shows it: its last turn, begun
 * once the job had started, and ended. Undefined when the log says nothing of the job's run.
 */
export function childEnd(job: LoggedJob, ownerId: string, child: LoadedSession): ChildEnd | undefined {
  const { header, events } = child
  if (header.parentSessionId !== ownerId || job.startedAt === undefined) return undefined
  const start = events.findLastIndex((event) => event.type === 'turn/start')
  const begun = events[start]
  // An earlier turn (a resumed child's) ended before this job began: this job's run never started there.
  if (begun === undefined || !(Date.parse(begun.time) >= job.startedAt)) return undefined
  const run = events.slice(start)
  const end = run.find((event) => event.type === 'turn/end')
  if (!end) return undefined
  const { reason, error } = eventData(end, 'turn/end')
  // Stopped from outside: interrupted (it can be continued), or cancelled (aborted) by a kill, the
  // owner's close or its time limit, which the log does not tell apart: lost, as it is not known how.
  if (reason === 'interrupted' || reason === 'aborted') return undefined
  if (reason === 'completed') return { status: 'done', result: `Its session ${header.id} recorded this answer:\n${lastAnswer(run) || '(no answer)'}` }
  const why = error ? `: ${error.code}: ${error.message}` : ''
  return { status: 'failed', error: shorten(`its session ${header.id} recorded its run ending ${reason}${why}`, MAX_ERROR_CHARS) }
}

/** The text of the run's last assistant message. */
function lastAnswer(events: readonly SessionEvent[]): string {
  const last = events.findLast((event) => event.type === 'assistant/message')
  if (!last) return ''
  return eventData(last, 'assistant/message').message.content.map((block) => (block.type === 'text' ? block.text : '')).join('').trim()
}
