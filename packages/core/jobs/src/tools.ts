/** The model's side of jobs: `job_output`, `job_list` and `job_kill`. Every answer ends with the job's status line. */

import { ReinError, defineTool, type RunIdentity, type ToolRun } from '@rein/tools'
import type { BufferLimits, JobsConfig } from './config.ts'
import { endingOf } from './ending.ts'
import { clip, count, savedAt, statusLine } from './format.ts'
import type { KillOutcome } from './runtime.ts'
import type { JobInfo, JobOutput, JobViewer } from './types.ts'

/** What the tools need from the service. */
export interface JobTools {
  list(viewer: JobViewer): JobInfo[]
  /** `read`, once the end of a job a dead process left is known. */
  readKnown(jobId: string, viewer: JobViewer, signal?: AbortSignal): Promise<JobOutput>
  kill(jobId: string, viewer: JobViewer): Promise<KillOutcome>
  wait(jobId: string, timeoutMs: number, viewer: JobViewer, signal?: AbortSignal): Promise<JobInfo>
}

/** A cancelled `job_output` answers with its own error (which says the output stays unread); it does so at once. */
const CANCEL_GRACE_MS = 1_000

const STATUS = { type: 'string', enum: ['running', 'done', 'failed', 'killed'], required: true } as const
const ENDING = {
  exitCode: { type: 'integer' },
  signal: { type: 'string' },
  timedOutAfterMs: { type: 'integer' },
  error: { type: 'string' },
  neverStarted: { type: 'boolean', description: 'failed before its work started: no output, no output file' },
} as const

export function createJobTools(jobs: JobTools, config: JobsConfig) {
  const jobOutput = defineTool({
    name: 'job_output',
    description: `Returns a background job's output since you last read it, then its status. With wait_ms, first waits up to that long for the job to end. Unread output beyond ${count(config.bufferChars)} characters or ${count(config.bufferLines)} lines is dropped, oldest first.`,
    parameters: {
      job_id: { type: 'string', required: true, description: 'The id the job was started with, e.g. "bash-1".' },
      wait_ms: { type: 'integer', minimum: 0, maximum: config.maxWaitMs, description: `Wait up to this many ms for the job to end (max ${config.maxWaitMs}).` },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          jobId: { type: 'string', required: true },
          status: STATUS,
          ...ENDING,
          output: { type: 'string', required: true },
          droppedChars: { type: 'integer', required: true },
          outputPath: { type: 'string' },
          outputFileNote: { type: 'string', description: 'the file at outputPath no longer holds the whole output: how' },
          pending: { type: 'string', description: 'the last state of a line the job is still redrawing (for an ended job: was redrawing when it ended)' },
          earlier: { type: 'boolean' },
        },
      },
      render: (_args, value) => {
        const parts: string[] = []
        if (value.earlier === true) parts.push(...earlierParts(value, config))
        else {
          if (value.droppedChars > 0) parts.push(dropNote(value.droppedChars, config, value.outputPath, value.outputFileNote))
          parts.push(value.output === '' ? '(no new output)' : value.output.replace(/\n$/, ''))
          if (value.pending !== undefined) parts.push(heldLineNote(value.status, value.pending))
        }
        if (value.error !== undefined) parts.push(`The job ${value.neverStarted === true ? 'never started' : 'failed'}: ${value.error}`)
        parts.push(statusLine(value))
        return parts.join('\n')
      },
    },
    execute: (args, run) => readOutput(jobs, args, run),
    cancelGraceMs: CANCEL_GRACE_MS,
    effects: ['read'],
    isConcurrencySafe: true,
    timeoutMs: config.maxWaitMs + 60_000,
    presentCall: (args) => ({ card: 'generic', kind: 'read', title: 'Read job output', detail: args.job_id }),
  })

  const jobList = defineTool({
    name: 'job_list',
    description: 'Lists your background jobs: id, what runs, unread output, status.',
    parameters: {},
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          jobs: {
            type: 'array',
            required: true,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: { jobId: { type: 'string', required: true }, label: { type: 'string', required: true }, status: STATUS, ...ENDING, unreadChars: { type: 'integer', required: true } },
            },
          },
        },
      },
      render: (_args, value) => value.jobs.length === 0 ? 'No background jobs.'
        : value.jobs.map((job) => `${job.jobId}: ${clip(job.label, 100)} (${count(job.unreadChars)} characters unread) ${statusLine(job)}`).join('\n'),
    },
    execute: (_args, run) => ({ jobs: jobs.list(viewerOf(run)).map((info) => ({ ...ending(info), label: info.label, unreadChars: info.unreadChars })) }),
    effects: ['read'],
    isConcurrencySafe: true,
    presentCall: () => ({ card: 'generic', kind: 'read', title: 'List background jobs' }),
  })

  const jobKill = defineTool({
    name: 'job_kill',
    description: 'Stops a background job and all its processes, and reports its final status.',
    parameters: {
      job_id: { type: 'string', required: true, description: 'The id of the job to stop, e.g. "bash-1".' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          jobId: { type: 'string', required: true },
          label: { type: 'string', required: true },
          status: STATUS,
          ...ENDING,
          killed: { type: 'boolean', required: true, description: 'this call ended it (false: it had ended already)' },
          stopping: { type: 'boolean', description: 'true: the job had not stopped within killGraceMs' },
          unreadChars: { type: 'integer', required: true },
        },
      },
      render: (_args, value) => [
        value.killed ? `Killed ${value.jobId} (${clip(value.label, 100)}).` : `${value.jobId} (${clip(value.label, 100)}) had already ended.`,
        ...(value.stopping === true ? [stoppingNote(config.killGraceMs)] : []),
        ...(value.unreadChars > 0 ? [`${count(value.unreadChars)} characters of output unread: job_output reads them.`] : []),
        statusLine(value),
      ].join('\n'),
    },
    execute: async (args, run) => {
      const viewer = viewerOf(run)
      const before = jobs.list(viewer).find((info) => info.jobId === args.job_id)?.status
      const { info, stopped } = await jobs.kill(args.job_id, viewer)
      return {
        ...ending(info), label: info.label, killed: before === 'running' && info.status === 'killed',
        ...(stopped ? {} : { stopping: true }), unreadChars: info.unreadChars,
      }
    },
    // It signals processes, the same effect as starting them: approval treats it like running a command.
    effects: ['exec'],
    // Killing twice is harmless; after a crash the job is gone and the call says so.
    replaySafe: true,
    timeoutMs: config.killGraceMs + 60_000,
    presentCall: (args) => ({ card: 'generic', kind: 'execute', title: 'Stop background job', detail: args.job_id }),
  })

  return { jobOutput, jobList, jobKill }
}

/**
 * `job_output`'s body: waits if asked, then takes the unread output. A call cancelled while it
 * waits takes nothing: its answer is never read, so the output must stay for the next call.
 */
async function readOutput(jobs: JobTools, args: { job_id: string; wait_ms?: number }, run: ToolRun) {
  const viewer = viewerOf(run)
  if (args.wait_ms !== undefined && args.wait_ms > 0) {
    await jobs.wait(args.job_id, args.wait_ms, viewer, run.signal)
    if (run.signal.aborted) throw cancelled(args.job_id)
  }
  const { info, output, droppedChars, pending } = await jobs.readKnown(args.job_id, viewer, run.signal)
  // Cancelled while the end of a job a dead process left was still being read from its child
  // session: its status is not known yet, and reading such a job takes nothing.
  if (run.signal.aborted && info.earlier === true && info.status === 'running') throw cancelled(args.job_id)
  return {
    ...ending(info), output, droppedChars,
    ...(info.outputPath === undefined ? {} : { outputPath: info.outputPath }),
    ...(info.outputFileNote === undefined ? {} : { outputFileNote: info.outputFileNote }),
    ...(pending === undefined ? {} : { pending }),
    ...(info.earlier === true ? { earlier: true } : {}),
  }
}

/** A `job_output` cancelled before it read anything: the output stays for the next call. */
function cancelled(jobId: string): ReinError {
  return new ReinError('JOB_OUTPUT_CANCELLED', `job_output was cancelled while it waited for ${jobId}; its new output was left unread: call job_output again to read it`)
}

/** The caller's run: job tools answer only inside an agent's turn. */
function viewerOf(run: ToolRun): RunIdentity {
  if (!run.identity) throw new ReinError('NO_RUN_IDENTITY', 'job tools answer only inside an agent\'s turn: this call carries no run identity')
  return run.identity
}

/** What the model reads of a job's end: its status and ending, but not the kill cause (its text says). */
function ending(info: JobInfo) {
  const { cause: _cause, ...told } = endingOf(info)
  return { jobId: info.jobId as string, status: info.status, ...told }
}

/**
 * Instead of the output, for a job read back from the log: nothing of it is in memory here, only
 * the result its end logged, if any. It may have run in an earlier process, or in this one before
 * its agent was closed and resumed: the words are true of both.
 */
function earlierParts(value: { jobId: string; output: string; droppedChars: number; outputPath?: string; outputFileNote?: string; neverStarted?: boolean }, kept: BufferLimits): string[] {
  const { jobId, output: result, droppedChars, outputPath: path } = value
  const was = `${jobId} belonged to an earlier run of this session`
  if (value.neverStarted === true) return [`(${was}: it never started)`]
  if (result === '') return [`(${was}: ${path === undefined ? 'its output was not kept' : `its output is saved at ${savedAt(path, value.outputFileNote)}`})`]
  const saved = path === undefined ? '' : `; its output is saved at ${savedAt(path, value.outputFileNote)}`
  const cut = droppedChars > 0 ? [`[… ${count(droppedChars)} earlier characters were cut: a job keeps at most ${count(kept.bufferChars)} characters and ${count(kept.bufferLines)} lines of its result.]`] : []
  return [`(${was}: its result was kept${saved})`, ...cut, result.replace(/\n$/, '')]
}

/** The kill's wait ran out before the job's body returned: its processes may outlive the answer. */
function stoppingNote(graceMs: number): string {
  return `It was still stopping after ${count(graceMs)} ms (killGraceMs): some of its processes may still be running; check before starting it again.`
}

/**
 * The held line after the output: a running job's is where it stands now; an ended job's is only
 * where it stood when it ended (killed, or failed mid-line), and nothing redraws it any more.
 */
function heldLineNote(status: JobInfo['status'], line: string): string {
  if (status === 'running') return `[a line it is still redrawing (a progress display) reads now: ${line}]`
  return `[the last state of a line it was redrawing when it ended: ${line}]`
}

function dropNote(dropped: number, kept: BufferLimits, path: string | undefined, fileNote: string | undefined): string {
  // A file that stopped at its cap may not hold what was dropped: the model must not count on it.
  const whole = path ? ` The output is saved at ${savedAt(path, fileNote)}.` : ' Read more often to keep up.'
  return `[… ${count(dropped)} earlier characters were dropped: a job keeps at most ${count(kept.bufferChars)} unread characters and ${count(kept.bufferLines)} lines.${whole}]`
}
