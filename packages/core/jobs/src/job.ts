/**
 * `Job`: one background job's live state — its signal, bounded output, and first-wins settlement —
 * and the `JobRun` its body reports through.
 */

import { ReinError, isReinError, messageOf, shorten, type JobId } from '@rein/base'
import type { RunIdentity } from '@rein/tools'
import { endingOf, type JobEnding } from './ending.ts'
import { fileNoteOf } from './format.ts'
import { OutputBuffer } from './output-buffer.ts'
import type { BufferLimits } from './config.ts'
import type { JobExit, JobInfo, JobRecord, JobRun, JobStatus, KillCause } from './types.ts'

/** What a job tells the runtime that runs it. */
export interface JobEvents {
  /** Once, when the job settles. */
  settled(job: Job): void
  /** The output file stopped keeping the whole output (`note`, kept): logged now, as a crash would lose the job's end. */
  fileCut(job: Job, note: string): void
  /** The body recorded reaping details; resolves once they are durable. */
  record(job: Job, details: JobRecord): Promise<void>
}

export interface JobInit {
  jobId: JobId
  kind: string
  label: string
  owner: RunIdentity
  /** Sessions that may see the job: the owner's and those above it. */
  viewers: readonly string[]
  bufferChars: number
  bufferLines: number
  outputPath?: string
}

interface Ending extends JobEnding {
  status: Exclude<JobStatus, 'running'>
  /** What `done` was given to keep with the end (`JobExit.result`), cut as the output is. */
  result?: string
  /** Characters cut from the head of `result`. */
  resultCut?: number
}

export class Job {
  readonly jobId: JobId
  readonly kind: string
  readonly label: string
  readonly owner: RunIdentity
  readonly outputPath: string | undefined
  readonly startedAt = Date.now()
  /** The owner's model read the output to the end after the job ended: it needs no notice. */
  seenByOwner = false
  /** The owner killed it (with `job_kill`): it knows, and needs no notice. */
  killedByOwner = false
  readonly done: Promise<JobInfo>
  private readonly _viewers: ReadonlySet<string>
  private readonly _controller = new AbortController()
  private readonly _buffer: OutputBuffer
  private _ending: (Ending & { endedAt: number }) | undefined
  /** Where the line the producer holds back is read while the job runs (`JobRun.pending`). */
  private _heldLine: (() => string) | undefined
  /** The held line's state when the job ended, cut as `read` shows it; '' when none. */
  private _lastHeld = ''
  /** How the output file stopped keeping the whole output, when it did (`JobRun.outputFileCut`). */
  private _fileNote: string | undefined
  private _body: Promise<void> = Promise.resolve()
  private readonly _resolveDone: (info: JobInfo) => void
  /** The longest result kept: as much as the buffer keeps of the output. */
  private readonly _maxResult: BufferLimits

  constructor(init: JobInit, private readonly events: JobEvents) {
    this.jobId = init.jobId
    this.kind = init.kind
    this.label = init.label
    this.owner = init.owner
    this.outputPath = init.outputPath
    this._viewers = new Set(init.viewers)
    this._buffer = new OutputBuffer(init.bufferChars, init.bufferLines)
    this._maxResult = { bufferChars: init.bufferChars, bufferLines: init.bufferLines }
    const { promise, resolve } = settledBy<JobInfo>()
    this.done = promise
    this._resolveDone = resolve
  }

  get status(): JobStatus {
    return this._ending?.status ?? 'running'
  }

  get signal(): AbortSignal {
    return this._controller.signal
  }

  /** How the job ended; undefined while it runs. */
  get ending(): Readonly<Ending> | undefined {
    return this._ending
  }

  visibleTo(sessionId: string): boolean {
    return this._viewers.has(sessionId)
  }

  /** Runs the body now. A synchronous throw fails the job; so does a rejection. */
  begin(run: (job: JobRun) => void | Promise<void>): void {
    const producer: JobRun = Object.freeze({
      jobId: this.jobId,
      signal: this._controller.signal,
      output: (text: string) => this.output(text),
      done: (exit?: JobExit) => this.finish(exit),
      fail: (error: unknown) => this.fail(error),
      neverStarted: (error: unknown) => this.settle({ status: 'failed', error: describe(error), neverStarted: true }),
      outputFileCut: (note: string) => this.outputFileCut(note),
      pending: (line: () => string) => this.holdLine(line),
      record: (details: JobRecord) => this.events.record(this, details),
    })
    let returned: void | Promise<void>
    try {
      returned = run(producer)
    } catch (error) {
      this.fail(error)
      return
    }
    this._body = Promise.resolve(returned).then(() => this.finish(), (error: unknown) => this.fail(error))
  }

  output(text: string): void {
    if (this._ending || typeof text !== 'string') return
    this._buffer.push(text)
  }

  /**
   * The line still held by the producer, as `read` shows it after the output; '' when none. Asked
   * of the producer now, not kept up to date as output comes: a redrawn line may be 64K characters
   * long, and is read far less often than it changes. Once the job ended, its state then.
   */
  get pending(): string {
    return this._ending ? this._lastHeld : this.heldLine()
  }

  private holdLine(line: () => string): void {
    if (this._ending || typeof line !== 'function') return
    this._heldLine = line
  }

  /** The producer's held line now, cut to its end; '' when there is none or its getter fails. */
  private heldLine(): string {
    const line = this._heldLine
    if (line === undefined) return ''
    let text: unknown
    try {
      text = line()
    } catch {
      return ''
    }
    if (typeof text !== 'string') return ''
    // Its end is what changes: a long line keeps its last characters, whole ones only.
    return text.length <= MAX_PENDING ? text : keptResult(text, { bufferChars: MAX_PENDING, bufferLines: 1 }).output
  }

  outputFileCut(note: string): void {
    const kept = fileNoteOf(note)
    if (this._ending || this.outputPath === undefined || kept === undefined || kept === this._fileNote) return
    this._fileNote = kept
    this.events.fileCut(this, kept)
  }

  finish(exit: JobExit = {}): void {
    const exitCode = typeof exit?.exitCode === 'number' && Number.isInteger(exit.exitCode) ? exit.exitCode : undefined
    const signal = typeof exit?.signal === 'string' && exit.signal ? exit.signal : undefined
    const timedOutAfterMs = typeof exit?.timedOutAfterMs === 'number' && Number.isSafeInteger(exit.timedOutAfterMs) && exit.timedOutAfterMs >= 0 ? exit.timedOutAfterMs : undefined
    // The result goes into the log: bounded like the output, so one answer cannot swell it.
    const kept = typeof exit?.result === 'string' && exit.result ? keptResult(exit.result, this._maxResult) : undefined
    const result = kept && { result: kept.output, ...(kept.droppedChars > 0 ? { resultCut: kept.droppedChars } : {}) }
    this.settle({
      status: 'done', ...(exitCode === undefined ? {} : { exitCode }), ...(signal ? { signal } : {}),
      ...(timedOutAfterMs === undefined ? {} : { timedOutAfterMs }), ...result,
    })
  }

  fail(error: unknown): void {
    this.settle({ status: 'failed', error: describe(error) })
  }

  /**
   * Ends the job as `killed` (unless it already ended), aborts its signal, and waits for the body
   * to return — at most `graceMs`: a body that ignores its signal is left behind, not awaited.
   * Resolves to whether the body returned in that time (false: what it runs may still be stopping).
   */
  async kill(cause: KillCause, graceMs: number): Promise<boolean> {
    this.settle({ status: 'killed', cause })
    // Settled first, so a `done` the abort triggers synchronously cannot win.
    if (!this._controller.signal.aborted) this._controller.abort(new ReinError('JOB_KILLED', `job ${this.jobId} was killed (${cause})`))
    let timer: ReturnType<typeof setTimeout> | undefined
    const returned = await Promise.race([
      this._body.then(() => true),
      new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), graceMs) }),
    ])
    clearTimeout(timer)
    return returned
  }

  /** The unread output (it counts as read from now on) and what was dropped before it. */
  take(): { output: string; droppedChars: number } {
    return this._buffer.take()
  }

  info(): JobInfo {
    const ending = this._ending
    return Object.freeze({
      jobId: this.jobId,
      kind: this.kind,
      label: this.label,
      status: this.status,
      ...endingOf(ending),
      sessionId: this.owner.sessionId,
      agent: this.owner.agent,
      startedAt: this.startedAt,
      ...(ending ? { endedAt: ending.endedAt } : {}),
      unreadChars: this._buffer.unreadChars,
      droppedChars: this._buffer.droppedChars,
      // A job that never started wrote no output: its producer may have removed the file.
      ...(this.outputPath === undefined || ending?.neverStarted === true ? {} : { outputPath: this.outputPath }),
      ...(this._fileNote === undefined || ending?.neverStarted === true ? {} : { outputFileNote: this._fileNote }),
    })
  }

  private settle(ending: Ending): void {
    if (this._ending) return
    // Its state as the job ended is what it keeps: the producer's own state goes on changing
    // (a killed command's pipes close) and the getter holds what the producer held.
    this._lastHeld = this.heldLine()
    this._heldLine = undefined
    this._ending = { ...ending, endedAt: Date.now() }
    this.events.settled(this)
    this._resolveDone(this.info())
  }
}

/**
 * A result as its end keeps it: cut by the same buffer as the output, so its last `max.bufferChars` characters
 * and `max.bufferLines` lines (whole characters only), and how many went before them. A result that is also the output's last
 * text (a subagent's answer) then reads the same live and from the log; and the end of a long
 * answer is what a model needs. The count is kept apart, not as a line in the text: `read` says it.
 */
export function keptResult(text: string, max: BufferLimits): { output: string; droppedChars: number } {
  const buffer = new OutputBuffer(max.bufferChars, max.bufferLines)
  buffer.push(text)
  return buffer.take()
}

/** A promise and its resolve, apart (Node 20 has no `Promise.withResolvers`). */
function settledBy<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((settle) => { resolve = settle })
  return { promise, resolve }
}

/**
 * The longest pending line shown, in characters: it comes on top of `bufferChars` in a
 * `job_output` answer, so it stays small beside it.
 */
const MAX_PENDING = 400

/** The longest failure reason kept, in characters: it reaches the model in a notice and the log. */
const MAX_ERROR_CHARS = 1000

/** Why a job failed, in one short string, whatever its body threw: never throws itself. */
function describe(error: unknown): string {
  const text = isReinError(error) ? `${error.code}: ${error.message}` : error instanceof Error ? error.message || error.name : messageOf(error)
  return shorten(text || 'the job failed without saying why', MAX_ERROR_CHARS)
}
