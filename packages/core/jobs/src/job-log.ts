/**
 * What jobs write to their owner's session log (ignorable plugin events: the model sees none of
 * them), and what a later process reads back: the numbering, the jobs a dead process left running,
 * and the notices it owed but never delivered.
 */

import type { JobEnding } from './ending.ts'
import { fileNoteOf } from './format.ts'
import type { JobRecord, KillCause } from './types.ts'

/** The plugin name injected notices carry as their source. */
export const PLUGIN = '@rein/jobs'

/** Every event type this package writes, all defined `ignorable`. */
export const JOB_EVENT_TYPES = ['jobs/start', 'jobs/record', 'jobs/end', 'jobs/seen', 'jobs/notice'] as const

// Types, not interfaces: they must be assignable to JsonValue to be appended.
/** `jobs/start`: the job, and where its producer keeps the whole output (when it does). */
type StartData = { jobId: string; kind: string; label: string; outputPath?: string; ref?: string }
/** `jobs/end`: how the job ended. */
export type EndData = JobEnding & {
  jobId: string
  status: 'done' | 'failed' | 'killed'
  /** Whether the owner is owed a notice (false when the owner killed it itself). */
  notice: boolean
  /** What the job's body kept with its end (`JobExit.result`): the output does not outlive the process. */
  result?: string
  /** Characters cut from the head of `result` to keep it within `bufferChars`. */
  resultCut?: number
  /** How the output file stopped keeping the whole output (`JobRun.outputFileCut`); absent from logs before it was kept. */
  outputFileNote?: string
}

/**
 * What the log recorded to find a job's processes: the producer's record, and the start time of its
 * group's leader when the group was recorded (clock ticks after boot): while the process with that
 * pid has that start time, the group is still the job's, whatever its processes' environments say.
 */
export type LoggedRecord = JobRecord & { leaderStart?: number }

/** A job as the log tells it; times are epoch ms from the events (undefined when unreadable). */
export interface LoggedJob {
  start: StartData
  record: LoggedRecord
  /** How the output file stopped keeping the whole output, logged as it happened (a `jobs/record`'s `outputFileNote`). */
  fileNote?: string
  end?: EndData
  startedAt?: number
  endedAt?: number
}

export interface LogView {
  /** The highest number used per kind. */
  numbers: Map<string, number>
  /** Every job the log tells of, oldest first. */
  all: LoggedJob[]
  /** Jobs started and never ended: a process died under them. */
  open: LoggedJob[]
  /** Jobs that ended owing their owner a notice that never reached the model. */
  owed: LoggedJob[]
  /**
   * Jobs that ended killed or failed: their end is saved before their processes are gone, so a
   * process killed while stopping them may have left some running.
   */
  cutShort: LoggedJob[]
}

/**
 * Reads the jobs part of a log. A notice counts as delivered once a message from this plugin
 * follows its `jobs/notice`: an agent adds all its pending injections to the log at once.
 */
export function readJobLog(events: readonly { seq: number; type: string; data: unknown; time?: string }[]): LogView {
  const jobs = new Map<string, LoggedJob>()
  const numbers = new Map<string, number>()
  const seen = new Set<string>()
  const handed = new Map<string, number>()
  let lastMessage = -1
  for (const event of events) {
    const data = event.data as Record<string, unknown> | null
    if (event.type === 'user/message') {
      if (isOurMessage(data)) lastMessage = event.seq
      continue
    }
    if (!event.type.startsWith('jobs/') || typeof data !== 'object' || data === null || typeof data.jobId !== 'string') continue
    const { jobId } = data
    if (event.type === 'jobs/start' && typeof data.kind === 'string') {
      const start: StartData = {
        jobId, kind: data.kind, label: typeof data.label === 'string' ? data.label : '',
        ...(typeof data.outputPath === 'string' ? { outputPath: data.outputPath } : {}),
        ...(typeof data.ref === 'string' ? { ref: data.ref } : {}),
      }
      jobs.set(jobId, { start, record: {}, ...timeOf(event.time, 'startedAt') })
      const n = numberOf(jobId, data.kind)
      if (n !== undefined && n > (numbers.get(data.kind) ?? 0)) numbers.set(data.kind, n)
    } else if (event.type === 'jobs/record') {
      const job = jobs.get(jobId)
      const note = fileNoteOf(data.outputFileNote)
      if (job) job.record = { ...job.record, ...recordOf(data) }
      if (job && note !== undefined) job.fileNote = note
    } else if (event.type === 'jobs/end') {
      const job = jobs.get(jobId)
      const end = endOf(jobId, data)
      if (job && end) Object.assign(job, { end }, timeOf(event.time, 'endedAt'))
    } else if (event.type === 'jobs/seen') {
      seen.add(jobId)
    } else if (event.type === 'jobs/notice') {
      handed.set(jobId, event.seq)
    }
  }
  const all = [...jobs.values()]
  return {
    numbers,
    all,
    open: all.filter((job) => job.end === undefined),
    cutShort: all.filter((job) => job.end !== undefined && job.end.status !== 'done'),
    owed: all.filter((job) => job.end?.notice === true && !seen.has(job.start.jobId) && !((handed.get(job.start.jobId) ?? Infinity) < lastMessage)),
  }
}

/** `bash-12` of kind `bash` → 12. */
function numberOf(jobId: string, kind: string): number | undefined {
  if (!jobId.startsWith(`${kind}-`)) return undefined
  const n = Number(jobId.slice(kind.length + 1))
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

const CAUSES: ReadonlySet<unknown> = new Set(['kill', 'owner', 'disposed', 'exit', 'lost'])

/** A `jobs/end` as written by `endData`; undefined when its status is not one of ours. */
function endOf(jobId: string, data: Record<string, unknown>): EndData | undefined {
  const { status, exitCode, signal, timedOutAfterMs, error, cause, neverStarted, notice, result, resultCut } = data
  if (status !== 'done' && status !== 'failed' && status !== 'killed') return undefined
  const outputFileNote = fileNoteOf(data.outputFileNote)
  return {
    jobId,
    status,
    ...(typeof exitCode === 'number' && Number.isSafeInteger(exitCode) ? { exitCode } : {}),
    ...(typeof signal === 'string' ? { signal } : {}),
    ...(typeof timedOutAfterMs === 'number' && Number.isSafeInteger(timedOutAfterMs) && timedOutAfterMs >= 0 ? { timedOutAfterMs } : {}),
    ...(typeof error === 'string' ? { error } : {}),
    ...(isCause(cause) ? { cause } : {}),
    ...(neverStarted === true ? { neverStarted } : {}),
    notice: notice === true,
    ...(typeof result === 'string' && result !== '' ? { result } : {}),
    ...(typeof result === 'string' && result !== '' && Number.isSafeInteger(resultCut) && (resultCut as number) > 0 ? { resultCut: resultCut as number } : {}),
    ...(outputFileNote === undefined ? {} : { outputFileNote }),
  }
}

function isCause(value: unknown): value is KillCause {
  return CAUSES.has(value)
}

/** `{[key]: epoch ms}` from an event's ISO time, or nothing when it has none. */
function timeOf(time: string | undefined, key: 'startedAt' | 'endedAt'): Partial<Record<'startedAt' | 'endedAt', number>> {
  const ms = time === undefined ? NaN : Date.parse(time)
  if (!Number.isFinite(ms)) return {}
  return key === 'startedAt' ? { startedAt: ms } : { endedAt: ms }
}

function recordOf(data: Record<string, unknown>): LoggedRecord {
  return {
    ...(Number.isSafeInteger(data.processGroup) ? { processGroup: data.processGroup as number } : {}),
    ...(typeof data.marker === 'string' ? { marker: data.marker } : {}),
    ...(Number.isSafeInteger(data.leaderStart) ? { leaderStart: data.leaderStart as number } : {}),
  }
}

function isOurMessage(data: Record<string, unknown> | null): boolean {
  const message = data?.message as { source?: { kind?: unknown; plugin?: unknown } } | undefined
  return message?.source?.kind === 'plugin' && message.source.plugin === PLUGIN
}
