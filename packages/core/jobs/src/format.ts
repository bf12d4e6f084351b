/** The text the model reads about jobs: the status line every answer ends with, and finish notices. */

import type { JobEnding } from './ending.ts'
import type { JobStatus, KillCause } from './types.ts'
import { groupDigits, shorten } from '@rein/base'

/** The fields a status line and a notice are made from. */
export interface JobFacts extends JobEnding {
  jobId: string
  label: string
  status: JobStatus
  /** Where the producer keeps the whole output, when it does. */
  outputPath?: string
  /** The file at `outputPath` no longer holds the whole output: how (`JobRun.outputFileCut`). */
  outputFileNote?: string
  /** A job of an earlier process whose end logged a result (`JobExit.result`): `job_output` gives it. */
  kept?: boolean
}

/** `[status: done] [exit code: 0]`, `[status: done] [timed out after 500 ms] [signal: SIGTERM]`, `[status: running]`. */
export function statusLine(facts: Pick<JobFacts, 'status' | 'exitCode' | 'signal' | 'timedOutAfterMs'>): string {
  let line = `[status: ${facts.status}]`
  // Said before the signal: the signal is how it was stopped, the time limit is why.
  if (facts.timedOutAfterMs !== undefined) line += ` [timed out after ${count(facts.timedOutAfterMs)} ms]`
  if (facts.exitCode !== undefined) line += ` [exit code: ${facts.exitCode}]`
  if (facts.signal !== undefined) line += ` [signal: ${facts.signal}]`
  return line
}

const KILLED: Record<KillCause, string> = {
  kill: 'was killed',
  owner: 'was killed because its agent closed',
  disposed: 'was killed because the jobs service was unloaded',
  exit: 'was killed because rein exited before it finished',
  lost: 'was lost: the rein process running it ended without recording how it ended, and any of its processes still running were stopped',
}

/**
 * One notice for one ended job. `unreadChars` is known for a job of this process; a job from an
 * earlier process (`undefined`) has no output left in memory: the notice names its file, if any.
 */
export function noticeText(facts: JobFacts, unreadChars: number | undefined): string {
  const what = facts.status === 'failed' ? `${facts.neverStarted === true ? 'never started' : 'failed'}: ${facts.error ?? 'unknown error'}`
    : facts.status === 'killed' ? KILLED[facts.cause ?? 'kill']
    : facts.timedOutAfterMs !== undefined ? 'timed out'
    : 'finished'
  return `Background job ${facts.jobId} (${clip(facts.label, 80)}) ${what}. ${outputSentence(facts, unreadChars)}${statusLine(facts)}`
}

/** What the notice says about the output, with a trailing space; empty when there is nothing to say. */
function outputSentence(facts: JobFacts, unreadChars: number | undefined): string {
  // Nothing ran, so there is no output to speak of.
  if (facts.neverStarted === true) return ''
  if (unreadChars !== undefined) {
    return unreadChars > 0 ? `${count(unreadChars)} characters of output unread: read them with job_output. ` : 'No unread output. '
  }
  if (facts.kept === true) return 'Its result was kept: read it with job_output. '
  if (facts.outputPath !== undefined) return `Its output${facts.cause === 'lost' ? ' up to then' : ''} is saved at ${savedAt(facts.outputPath, facts.outputFileNote)}. `
  // A lost job's sentence already says the rein process running it ended.
  return facts.cause === 'lost' ? '' : 'Its output is no longer available. '
}

/** A path of saved output, and how its file stopped keeping all of it when it did: the model must not count on it. */
export function savedAt(path: string, fileNote: string | undefined): string {
  return fileNote === undefined ? path : `${path} (${fileNote})`
}

/** The longest note on the output file kept: it is repeated in every drop note. */
const MAX_FILE_NOTE = 200

/** A producer's note on its output file, as it is kept (one line, at most 200 characters); undefined for none. */
export function fileNoteOf(note: unknown): string | undefined {
  if (typeof note !== 'string' || note.trim() === '') return undefined
  return clip(note, MAX_FILE_NOTE)
}

/** Thousands separated the same on every machine. */
export function count(n: number): string {
  return groupDigits(n)
}

/** At most `max` characters, on one line. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return shorten(line, max)
}
