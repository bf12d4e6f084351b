/**
 * Commands a kill cut off. The walk after a command records what it changed; a kill mid-command
 * leaves no walk after it, and the next process's first walk takes its changes for the workspace as
 * it was. The session log is where a rewind learns of them: repair pairs such a call with
 * `COMMAND_INTERRUPTED` (its processes were still running) or `TOOL_OUTCOME_UNKNOWN` (none were:
 * it may have finished, and its walk may have run), and a log not yet repaired has no result for it.
 */

import { eventData, turnAnchor, type SessionEvent } from '@rein/session'
import type { CutOffCommand } from '../types.ts'
import { commandLabel } from './coverage.ts'

/** Results repair gives a call whose body had begun when rein was killed. */
const CUT_OFF = new Set(['COMMAND_INTERRUPTED', 'TOOL_OUTCOME_UNKNOWN'])

/**
 * The commands `covered` names that a kill cut off, in the turns from the first of `anchors` on (a
 * rewind undoes every turn after the one it goes back before), as they ran; not one whose walk
 * after it left records (`recordedBy` holds their `by`).
 */
export function cutOffCommands(events: readonly SessionEvent[], anchors: ReadonlySet<string>, covered: (toolName: string) => boolean, recordedBy: ReadonlySet<string>): CutOffCommand[] {
  let rewound = false
  const open = new Map<string, string>()
  // A command run as a background job: its walk after runs when the job ends, which a kill prevents.
  const jobs = new Map<string, { callId: string; by: string }>()
  const cut: CutOffCommand[] = []
  events.forEach((event, index) => {
    if (event.type === 'turn/start') rewound ||= anchors.has(turnAnchor(events, index) ?? '')
    else if (!rewound) return
    else if (event.type === 'tool/call') {
      const { callId, name, arguments: raw } = eventData(event, 'tool/call')
      if (covered(name)) open.set(callId, commandLabel(name, parsed(raw)))
    } else if (event.type === 'tool/result') {
      const { callId, isError, code } = eventData(event, 'tool/result')
      const by = open.get(callId)
      open.delete(callId)
      if (by !== undefined && isError && code !== undefined && CUT_OFF.has(code)) cut.push({ callId, by, code })
    } else if (event.type === JOB_START) {
      // Started by the covered call whose body is running: the last one still without a result.
      const started = [...open].at(-1)
      const jobId = jobIdOf(event.data)
      if (started !== undefined && jobId !== undefined) jobs.set(jobId, { callId: started[0], by: started[1] })
    } else if (event.type === JOB_END) {
      const jobId = jobIdOf(event.data)
      const job = jobId === undefined ? undefined : jobs.get(jobId)
      if (job === undefined || jobId === undefined) return
      jobs.delete(jobId)
      if (isRecord(event.data) && event.data.cause === 'lost') cut.push({ ...job, job: jobId, code: JOB_LOST })
    }
  })
  // No result at all: the log ends inside the call (not repaired yet, as a dry run reads it).
  for (const [callId, by] of open) cut.push({ callId, by })
  // No end at all: rein was stopped while the job ran, and nothing has reaped it since.
  for (const [job, started] of jobs) cut.push({ ...started, job })
  return cut.filter((command) => !recordedBy.has(command.by))
}

/** @rein/jobs' events (read as data: this package does not depend on it). */
const JOB_START = 'jobs/start'
const JOB_END = 'jobs/end'
/** How a cut-off names a job the next process found lost (its rein process ended without recording its end). */
const JOB_LOST = 'JOB_LOST'

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

function jobIdOf(data: unknown): string | undefined {
  return isRecord(data) && typeof data.jobId === 'string' ? data.jobId : undefined
}

/** How a plan's `notCovered` says it. */
export function cutOffLine({ by, code, job }: CutOffCommand): string {
  if (job !== undefined && code === JOB_LOST) return `\`${by}\` ran as background job ${job}, which was lost when rein was stopped: what it changed was not recorded and is not undone; check by hand`
  if (job !== undefined) return `\`${by}\` ran as background job ${job}, which has no end in the log (rein was stopped while it ran): what it changed was not recorded and is not undone, and it may still be running; check by hand`
  if (code === 'TOOL_OUTCOME_UNKNOWN') return `\`${by}\` had no result when rein was stopped (${code}): what it changed may not have been recorded, and is not undone; check by hand`
  const why = code === undefined ? 'it has no result, the session not being repaired yet' : code
  return `\`${by}\` was cut off when rein was stopped (${why}): what it changed was not recorded and is not undone; check by hand`
}

function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}
