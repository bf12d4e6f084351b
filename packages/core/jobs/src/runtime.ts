/**
 * `JobRuntime`: the live jobs of one `ctx.jobs` — starting them for an agent, numbering them from
 * the owner's log, who may see them, reading, killing and waiting, and ending them with their
 * owner, the plugin or the process. First sight of a session also settles what a dead process left.
 */

import type { Logger } from '@deepseek-ai/cordis'
import type { Agent } from '@rein/agent'
import { cutHead, MAX_TIMER_MS, ReinError, shorten, type JobId } from '@rein/base'
import type { LoadedSession, Session } from '@rein/session'
import { childEnd, type ChildEnd } from './child-end.ts'
import { endingOf } from './ending.ts'
import type { JobsConfig } from './config.ts'
import { noticeText, type JobFacts } from './format.ts'
import { Job, keptResult } from './job.ts'
import { readJobLog, type EndData, type LoggedJob, type LogView } from './job-log.ts'
import { Notices, appendTo } from './notices.ts'
import { isMarker, leaderStartOf, reapRecorded } from './reaper.ts'
import type { JobHandle, JobInfo, JobOutput, JobRecord, JobViewer, LostJob, SettleReport, StartJob } from './types.ts'

/** What the runtime knows of a session it has seen: the numbers used per kind, and the jobs its log told of. */
interface Book {
  numbers: Map<string, number>
  /** Jobs of an earlier process (or plugin load), by id: `read`, `wait` and `kill` answer for them from the log. */
  past: Map<string, LoggedJob>
  /** Past jobs whose end is being read from their child session: settles once it is logged (or cannot be). */
  ending: Map<string, Promise<unknown>>
  /** The owner agent's name, for their `JobInfo`. */
  agent: string
}

/** What a kill did: the job's state after, and whether its body returned within `killGraceMs`. */
export interface KillOutcome {
  info: JobInfo
  stopped: boolean
}

const KIND = /^[a-z][a-z0-9_]{0,31}$/
const MAX_LABEL = 200
/** The most of an unknown job id an error repeats: ours are `<kind>-<n>`, at most 32 + 1 + 16 characters. */
const MAX_NAMED_ID = 80
/** Parent links followed to list who sees a job; far deeper than any agent tree. */
const MAX_DEPTH = 64

export class JobRuntime {
  private jobs: Job[] = []
  private readonly books = new Map<string, Book>()
  /** Highest number per conversation and kind, so ids never repeat across a conversation's sessions. */
  private readonly counters = new Map<string, number>()
  private readonly hooked = new Map<Session, () => void>()
  private readonly listeners = new Set<(info: JobInfo) => void>()
  private readonly notices: Notices
  private closed = false

  /**
   * `load` reads a stored session (undefined without sessions): a job left without an end whose
   * `ref` names its child session ended as that session's log says.
   */
  constructor(
    private readonly config: JobsConfig,
    private readonly agent: (sessionId: string) => Agent | undefined,
    private readonly logger: Logger,
    private readonly lost: (job: LostJob) => void = () => {},
    private readonly load: (sessionId: string) => Promise<LoadedSession> | undefined = () => undefined,
  ) {
    this.notices = new Notices(agent, logger)
  }

  start(options: StartJob): JobHandle {
    if (this.closed) throw new ReinError('JOBS_CLOSED', 'the jobs service is shutting down; no job can start')
    const { kind, label, owner, run } = checkStart(options)
    if (options.signal?.aborted) throw new ReinError('JOB_START_ABORTED', `the ${kind} job was not started: its caller was cancelled`)
    const agent = this.agent(owner.sessionId)
    if (!agent || agent.session.closed) {
      throw new ReinError('JOB_OWNER_GONE', `no live agent owns session ${owner.sessionId}: a job must be started by a running agent's tool call`, { details: { sessionId: owner.sessionId } })
    }
    const book = this.visit(agent)
    const jobId = this.nextId(book, owner.conversationId, kind)
    const job = new Job({
      jobId, kind, label, owner,
      viewers: this.viewers(agent),
      bufferChars: this.config.bufferChars,
      bufferLines: this.config.bufferLines,
      ...(options.outputPath ? { outputPath: options.outputPath } : {}),
    }, { settled: (ended) => this.settled(ended), fileCut: (cut, note) => this.fileCut(cut, note), record: (recorded, details) => this.record(recorded, details) })
    this.jobs.push(job)
    // The output's path is logged too: it outlives this process, the in-memory buffer does not.
    appendTo(agent.session, 'jobs/start', { jobId, kind, label, ...(options.outputPath ? { outputPath: options.outputPath } : {}), ...(options.ref === undefined ? {} : { ref: cutHead(options.ref, 200) }) }, this.logger)
    job.begin(run)
    // `done` is not enumerable: the handle spreads and serializes as the JSON a tool returns.
    return Object.freeze(Object.defineProperty({ kind: 'background' as const, jobId }, 'done', { value: job.done, enumerable: false }) as JobHandle)
  }

  list(viewer: JobViewer): JobInfo[] {
    checkViewer(viewer)
    return this.jobs.filter((job) => job.visibleTo(viewer.sessionId)).map((job) => job.info())
  }

  /**
   * The output not read before; once the job ended, the owner reading it counts as told. A job of
   * an earlier process has no output in memory: its info (`earlier`, `outputPath`) says where it
   * is, and the output given is the result its end kept, if any.
   */
  read(jobId: string, viewer: JobViewer): JobOutput {
    const past = this.past(jobId, viewer)
    // Its output went with its process; the result its end logged is what is left of it, cut as the output was.
    if (past) {
      const end = this.books.get(viewer.sessionId)?.past.get(jobId)?.end
      return Object.freeze({ info: past, output: end?.result ?? '', droppedChars: end?.resultCut ?? 0 })
    }
    const job = this.find(jobId, viewer)
    const { output, droppedChars } = job.take()
    if (job.status !== 'running' && viewer.sessionId === job.owner.sessionId && !job.seenByOwner) {
      job.seenByOwner = true
      const session = this.agent(job.owner.sessionId)?.session
      if (session) appendTo(session, 'jobs/seen', { jobId: job.jobId }, this.logger)
    }
    const pending = job.pending
    return Object.freeze({ info: job.info(), output, droppedChars, ...(pending === '' ? {} : { pending }) })
  }

  /** `read`, once the end of a past job being read from its child session is known: what `job_output` answers. */
  async readKnown(jobId: string, viewer: JobViewer, signal?: AbortSignal): Promise<JobOutput> {
    await this.ending(jobId, viewer, signal)
    return this.read(jobId, viewer)
  }

  /** Kills a job and waits for its body, at most `killGraceMs`; `stopped` says whether it returned in that time. */
  async kill(jobId: string, viewer: JobViewer): Promise<KillOutcome> {
    // Ended before this process began; whatever it left running was reaped when the session was first seen.
    await this.ending(jobId, viewer)
    const past = this.past(jobId, viewer)
    if (past) return { info: past, stopped: true }
    const job = this.find(jobId, viewer)
    if (job.status === 'running' && viewer.sessionId === job.owner.sessionId) job.killedByOwner = true
    const stopped = await job.kill('kill', this.config.killGraceMs)
    return { info: job.info(), stopped }
  }

  async wait(jobId: string, timeoutMs: number, viewer: JobViewer, signal?: AbortSignal): Promise<JobInfo> {
    await this.ending(jobId, viewer, signal)
    const past = this.past(jobId, viewer)
    if (past) return past
    const job = this.find(jobId, viewer)
    if (job.status === 'running') await until(job.done, timeoutMs, signal)
    return job.info()
  }

  onDone(listener: (info: JobInfo) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Waits for running jobs (of one session and those below it, or all) up to `timeoutMs`, then
   * kills the rest (`exit`) and saves their owners' logs: what a process calls before it exits.
   */
  async settle(options: { timeoutMs?: number; sessionId?: string; signal?: AbortSignal } = {}): Promise<SettleReport> {
    const { sessionId, signal } = options
    const running = this.jobs.filter((job) => job.status === 'running' && (sessionId === undefined || job.visibleTo(sessionId)))
    await until(Promise.all(running.map((job) => job.done)), options.timeoutMs ?? this.config.exitWaitMs, signal)
    const late = running.filter((job) => job.status === 'running')
    await Promise.all(late.map((job) => job.kill('exit', this.config.killGraceMs)))
    await this.save(running)
    return Object.freeze({
      finished: running.filter((job) => !late.includes(job)).map((job) => job.info()),
      killed: late.map((job) => job.info()),
    })
  }

  /** Delivers a session's queued notices: its agent is at a step boundary. */
  boundary(sessionId: string): void {
    this.notices.deliver(sessionId)
  }

  /** A turn starts (or `reap` asks): settle what an earlier process left in this session, then deliver what is queued. */
  visitSession(sessionId: string): void {
    const agent = this.agent(sessionId)
    if (agent && !agent.session.closed && !this.closed) this.visit(agent)
    this.notices.deliver(sessionId)
  }

  /** The plugin goes: every job is killed and awaited, queued notices handed, logs saved. */
  async dispose(): Promise<void> {
    this.closed = true
    const jobs = this.jobs
    // Everything that appends happens before the first await: each kill settles (and logs) its job
    // synchronously, while the event types are still defined (see the service's constructor).
    const killing = jobs.map((job) => job.kill('disposed', this.config.killGraceMs))
    this.notices.deliverAll()
    await Promise.all(killing)
    await this.save(jobs)
    for (const unhook of this.hooked.values()) unhook()
    this.hooked.clear()
    this.jobs = []
    this.listeners.clear()
  }

  private find(jobId: string, viewer: JobViewer): Job {
    const job = this.jobs.find((candidate) => candidate.jobId === jobId && candidate.visibleTo(viewer.sessionId))
    if (!job) {
      const ids = this.list(viewer).map((info) => info.jobId)
      // Quoted and cut: the id is the model's, and may be anything (a whole file, many lines).
      const named = JSON.stringify(shorten(String(jobId), MAX_NAMED_ID))
      throw new ReinError('JOB_NOT_FOUND', `no background job ${named} here; ${ids.length > 0 ? `the jobs are ${ids.join(', ')}` : 'there are none'} (job_list lists them)`, { details: { jobId: shorten(String(jobId), MAX_NAMED_ID) } })
    }
    return job
  }

  /**
   * Settles once the end of a past job a dead process left is logged, when it is being read from
   * its child session (a local file: soon), so that the job's end is not taken for `killed`; or once
   * `signal` aborts (a store whose read never settles must not hold a cancelled call).
   */
  private async ending(jobId: string, viewer: JobViewer, signal?: AbortSignal): Promise<void> {
    // A missing viewer is refused before anything reads it.
    checkViewer(viewer)
    const pending = this.books.get(viewer.sessionId)?.ending.get(jobId)
    if (pending) await until(pending, MAX_TIMER_MS, signal)
  }

  /** A job the owner's log told of when this runtime first saw the session, and that is not live here. */
  private past(jobId: string, viewer: JobViewer): JobInfo | undefined {
    // Asked first by read, kill and wait: a missing viewer is refused before anything reads it.
    checkViewer(viewer)
    const book = this.books.get(viewer.sessionId)
    const logged = book?.past.get(jobId)
    if (!book || !logged || this.jobs.some((job) => job.jobId === jobId && job.visibleTo(viewer.sessionId))) return undefined
    return earlierInfo(logged, viewer.sessionId, book.agent)
  }

  private nextId(book: Book, conversationId: string, kind: string): JobId {
    const key = counterKey(conversationId, kind)
    const n = Math.max(book.numbers.get(kind) ?? 0, this.counters.get(key) ?? 0) + 1
    book.numbers.set(kind, n)
    this.counters.set(key, n)
    return `${kind}-${n}` as JobId
  }

  /** The owner's session and every session above it, through the live agents' parent links. */
  private viewers(agent: Agent): string[] {
    const viewers = [agent.session.id]
    let parent = agent.parent
    while (parent && viewers.length < MAX_DEPTH) {
      viewers.push(parent.sessionId)
      parent = this.agent(parent.sessionId)?.parent
    }
    return viewers
  }

  /**
   * The first time this runtime meets a session (a turn starts, or a job starts in it): number from
   * its log, reap the jobs a dead process left running (one notice each: lost, or how their child
   * session shows they ended), and hand the notices an earlier process owed but never delivered.
   */
  private visit(agent: Agent): Book {
    const { session } = agent
    if (!this.hooked.has(session)) this.hooked.set(session, session.beforeClose(() => this.ownerClosing(session)))
    const known = this.books.get(session.id)
    if (known) return known
    const view = readJobLog(session.events)
    const book: Book = { numbers: view.numbers, past: new Map(view.all.map((job) => [job.start.jobId, job])), ending: new Map(), agent: agent.options.name }
    this.books.set(session.id, book)
    // A resumed parent's old ids must not be handed to its new subagents' jobs either.
    const conversationId = agent.parent?.conversationId ?? session.id
    for (const [kind, n] of view.numbers) {
      const key = counterKey(conversationId, kind)
      this.counters.set(key, Math.max(n, this.counters.get(key) ?? 0))
    }
    const later = this.reapLeft(session, view, book.ending)
    this.handLeft(agent, [...view.owed, ...view.open.filter((job) => job.end !== undefined)])
    // Read from their child sessions: their notices follow (at the next step boundary, if a turn began meanwhile).
    void later.then((ended) => this.handLeft(agent, ended)).catch((error: unknown) => this.logger.warn('session %s: jobs left by an earlier process were not told: %s', session.id, error))
    return book
  }

  /** Hands the notices of jobs an earlier process left (once each), and saves what reaping logged. */
  private handLeft(agent: Agent, jobs: readonly LoggedJob[]): void {
    const { session } = agent
    if (jobs.length === 0 || session.closed) return
    for (const job of jobs) {
      if (!this.notices.wasHanded(agent, job.start.jobId)) this.notices.hand(agent, job.start.jobId, noticeText(factsOf(job), undefined))
    }
    session.flush().catch((error: unknown) => this.logger.warn('session %s: jobs left by an earlier process were not saved: %s', session.id, error))
  }

  /**
   * A session no agent will continue here (a lost subagent being closed): what its jobs left
   * running is stopped and each job never ended is logged (`killed: lost` unless its child session
   * shows it ended); the notices wait for whoever resumes it. A session this runtime has met may
   * have live jobs here: it is left alone.
   */
  async reapClosed(session: Session): Promise<void> {
    if (this.books.has(session.id)) return
    const view = readJobLog(session.events)
    await this.reapLeft(session, view)
    if (view.open.length > 0 && !session.closed) await session.flush()
  }

  /**
   * Kills what a dead process left running for the session's jobs (those never ended, and those
   * cut short, whose processes may outlive their end), tells each job's producer of every job never
   * ended (`jobs/lost`) and logs its end: as its child session's log shows it ended, else `killed:
   * lost`. Jobs without such a session are ended before it returns; it resolves with those ended
   * from one, and `ending` holds each of those until its end is logged.
   */
  private reapLeft(session: Session, view: LogView, ending?: Map<string, Promise<unknown>>): Promise<LoggedJob[]> {
    // One pass over the process table for both.
    const suspects = [...view.open, ...view.cutShort]
    const reaped = suspects.length > 0 ? reapRecorded(suspects.map((job) => job.record)) : undefined
    if (reaped && (view.open.length > 0 || reaped.pids.length > 0)) {
      this.logger.info('session %s: %d job(s) left by an earlier process, %d ended killed or failed; killed pids %o, groups %o', session.id, view.open.length, view.cutShort.length, reaped.pids, reaped.groups)
    }
    // Said whatever the command (rein compact runs no turn, so no model tells it): rein stopped a person's processes.
    if (reaped && reaped.hit.length > 0) {
      const jobs = reaped.hit.flatMap((index) => {
        const start = suspects[index]?.start
        return start ? [`${start.jobId}: ${shorten(start.label, 80)}`] : []
      }).join(', ')
      const what = reaped.pids.length > 0 ? (reaped.pids.length === 1 ? '1 process' : `${reaped.pids.length} processes`) : 'the process groups'
      this.logger.warn('session %s: stopped %s that jobs of a process that ended without stopping them had left running (%s)', session.id, what, jobs)
    }
    const later: Promise<LoggedJob | undefined>[] = []
    for (const job of view.open) {
      // A job that recorded nothing has no processes to check (a subagent runs in-process).
      if (recordedProcesses(job) && !isMarker(job.record.marker)) this.logger.warn('job %s in session %s recorded no marker: jobs could not check its processes itself; its producer is told (jobs/lost) to stop what it left running', job.start.jobId, session.id)
      const child = this.childEndOf(job, session.id)
      if (child) {
        const ended = child.then((end) => (this.endLeft(session, job, end) ? job : undefined))
        later.push(ended)
        ending?.set(job.start.jobId, ended.catch(() => {}).finally(() => ending.delete(job.start.jobId)))
      } else this.endLeft(session, job, undefined)
      // Told now, before a child's log is read: a host that ends right after reaping waits for what
      // producers do then (a lost child's log is closed; a finished one's is complete, so it stays as it is).
      const { jobId, kind, label, ref } = job.start
      this.lost({ sessionId: session.id, jobId, kind, label, ...(ref === undefined ? {} : { ref }) })
    }
    return Promise.all(later).then((jobs) => jobs.filter((job): job is LoggedJob => job !== undefined))
  }

  /** How the session the job's `ref` names shows it ended; undefined when it names none, or it does not say. */
  private childEndOf(job: LoggedJob, ownerId: string): Promise<ChildEnd | undefined> | undefined {
    const { ref } = job.start
    const loading = ref === undefined ? undefined : this.load(ref)
    return loading?.then((child) => childEnd(job, ownerId, child), (error: unknown) => {
      this.logger.debug('job %s: session %s (its ref) could not be read: %s', job.start.jobId, ref, error)
      return undefined
    })
  }

  /**
   * Logs the end of a job a dead process left: `found` (what its child session shows), else
   * `killed: lost`. False when nothing can be logged any more (the session or this runtime
   * closed while its child's log was read): the next process reaps it.
   */
  private endLeft(session: Session, job: LoggedJob, found: ChildEnd | undefined): boolean {
    if (this.closed || session.closed) return false
    const { jobId } = job.start
    const kept = found?.result === undefined ? undefined : keptResult(found.result, this.config)
    // The cut logged as it happened: this end is logged by a later process, which never saw it.
    const note = job.fileNote === undefined ? {} : { outputFileNote: job.fileNote }
    job.end = found
      ? { jobId, ...found, notice: true, ...(kept ? { result: kept.output, ...(kept.droppedChars > 0 ? { resultCut: kept.droppedChars } : {}) } : {}), ...note }
      : { jobId, status: 'killed', cause: 'lost', notice: true, ...note }
    job.endedAt = Date.now()
    appendTo(session, 'jobs/end', { ...job.end }, this.logger)
    return true
  }

  /** The owner's session is closing: its jobs are killed and awaited while their ends can still be written. */
  private async ownerClosing(session: Session): Promise<void> {
    this.hooked.delete(session)
    const owned = this.jobs.filter((job) => job.owner.sessionId === session.id)
    const stopped = await Promise.all(owned.map((job) => job.kill('owner', this.config.killGraceMs)))
    // The log is about to close: whatever such a body does from now on is written nowhere here. Its
    // end is the one logged: one that ended (done, say) before its body returned was not killed.
    for (const [index, job] of owned.entries()) {
      if (!stopped[index]) this.logger.warn('session %s closed while job %s (%s) was still stopping after %d ms (killGraceMs): its end is logged as %s; what it does after is its producer\'s to record', session.id, job.jobId, job.label, this.config.killGraceMs, job.status)
    }
    this.notices.deliver(session.id)
    this.jobs = this.jobs.filter((job) => !owned.includes(job))
    this.books.delete(session.id)
  }

  private settled(job: Job): void {
    const info = job.info()
    const notice = !job.killedByOwner
    const session = this.agent(job.owner.sessionId)?.session
    if (session && appendTo(session, 'jobs/end', endData(info, notice, job.ending), this.logger)) {
      session.flush().catch((error: unknown) => this.logger.warn('session %s: the end of job %s was not saved: %s', session.id, job.jobId, error))
    }
    // A copy: a listener that disposes itself must not make the next one skip.
    for (const listener of Array.from(this.listeners)) {
      try {
        listener(info)
      } catch (error) {
        this.logger.error('a jobs onDone listener failed: %s', error)
      }
    }
    if (!notice) return
    const now = info.cause === 'owner' || info.cause === 'disposed' || info.cause === 'exit'
    this.notices.add(job.owner.sessionId, {
      jobId: job.jobId,
      wanted: () => !job.seenByOwner,
      text: () => noticeText(job.info(), job.info().unreadChars),
    }, now)
  }

  /**
   * Logs the output file's cut when it happens, in a `jobs/record` (a reader that knows only its
   * reaping fields skips the note): a process killed before the job ends never logs its end, and
   * the next one would send the model to the file for output it lacks.
   */
  private fileCut(job: Job, note: string): void {
    const session = this.agent(job.owner.sessionId)?.session
    if (!session || !appendTo(session, 'jobs/record', { jobId: job.jobId, outputFileNote: note }, this.logger)) return
    session.flush().catch((error: unknown) => this.logger.warn('session %s: the cut of job %s\'s output file was not saved: %s', session.id, job.jobId, error))
  }

  private async record(job: Job, details: JobRecord): Promise<void> {
    const { processGroup, marker } = details ?? {}
    if ((processGroup !== undefined && !(Number.isSafeInteger(processGroup) && processGroup > 1)) || (marker !== undefined && !isMarker(marker))) {
      throw new ReinError('JOB_INVALID_RECORD', 'record() takes {processGroup?: an integer above 1, marker?: an environment entry "NAME=value"}')
    }
    if (this.closed) {
      throw new ReinError('JOB_RECORD_FAILED', `job ${job.jobId}: the jobs service was unloaded and is killing its jobs, so nothing more is recorded; end the job's processes yourself`)
    }
    const session = this.agent(job.owner.sessionId)?.session
    const leaderStart = processGroup === undefined ? undefined : leaderStartOf(processGroup)
    const data = {
      jobId: job.jobId, ...(processGroup === undefined ? {} : { processGroup }), ...(marker === undefined ? {} : { marker }),
      ...(leaderStart === undefined ? {} : { leaderStart }),
    }
    if (!session || !appendTo(session, 'jobs/record', data, this.logger)) {
      throw new ReinError('JOB_RECORD_FAILED', `job ${job.jobId}: its owner's session is closed, so nothing could reap it after a crash`)
    }
    try {
      await session.flush()
    } catch (error) {
      throw new ReinError('JOB_RECORD_FAILED', `job ${job.jobId}: the session log could not be saved, so nothing could reap it after a crash`, { cause: error })
    }
  }

  /** Makes the owners' logs durable (each once); a failure is logged. */
  private async save(jobs: readonly Job[]): Promise<void> {
    const sessions = new Set<Session>()
    for (const job of jobs) {
      const session = this.agent(job.owner.sessionId)?.session
      if (session && !session.closed) sessions.add(session)
    }
    await Promise.all([...sessions].map((session) => session.flush().catch((error: unknown) => {
      this.logger.warn('session %s: job ends were not saved: %s', session.id, error)
    })))
  }
}

function counterKey(conversationId: string, kind: string): string {
  return `${conversationId}\n${kind}`
}

/** `JOB_INVALID` unless `viewer` names a session: who asks decides which jobs it sees. */
function checkViewer(viewer: JobViewer): void {
  if (typeof (viewer as Partial<JobViewer> | undefined)?.sessionId !== 'string') {
    throw new ReinError('JOB_INVALID', 'a viewer is needed: the asking tool call\'s run identity ({sessionId, …}), which decides the jobs it sees')
  }
}

function checkStart(options: StartJob): StartJob {
  const { kind, label, owner, run } = options ?? {}
  if (typeof kind !== 'string' || !KIND.test(kind)) {
    throw new ReinError('JOB_INVALID', `a job's kind must be 1-32 lowercase letters, digits or _, starting with a letter (got ${JSON.stringify(kind)})`)
  }
  if (typeof label !== 'string') throw new ReinError('JOB_INVALID', 'a job needs a label: one line saying what it runs')
  if (typeof owner?.sessionId !== 'string' || typeof owner.conversationId !== 'string') {
    throw new ReinError('JOB_INVALID', "a job needs its owner's run identity (the tool call's run.identity)")
  }
  if (typeof run !== 'function') throw new ReinError('JOB_INVALID', 'a job needs a run(job) function: its body')
  if (options.ref !== undefined && typeof options.ref !== 'string') throw new ReinError('JOB_INVALID', "a job's ref must be a string (what it is started for), or left out")
  if (options.outputPath !== undefined && (typeof options.outputPath !== 'string' || options.outputPath === '')) {
    throw new ReinError('JOB_INVALID', "a job's outputPath must be the path of its output file, a non-empty string, or left out")
  }
  const line = label.replace(/\s+/g, ' ').trim()
  return { ...options, label: shorten(line, MAX_LABEL) }
}

function endData(info: JobInfo, notice: boolean, kept: Pick<EndData, 'result' | 'resultCut'> = {}): EndData {
  const { result, resultCut } = kept
  return {
    jobId: info.jobId,
    status: info.status === 'running' ? 'done' : info.status,
    ...endingOf(info),
    notice,
    ...(result === undefined ? {} : { result }),
    ...(resultCut === undefined ? {} : { resultCut }),
    // A later process names the file with it: without it, it would send the model to output it lacks.
    ...(info.outputFileNote === undefined ? {} : { outputFileNote: info.outputFileNote }),
  }
}

function factsOf(job: LoggedJob): JobFacts {
  const end = job.end
  return {
    jobId: job.start.jobId,
    label: job.start.label,
    status: end?.status ?? 'killed',
    ...endingOf(end),
    // A job that never started names no file: its producer may have removed the one logged at its start.
    ...(job.start.outputPath === undefined || end?.neverStarted === true ? {} : { outputPath: job.start.outputPath }),
    ...(job.start.outputPath === undefined || end?.neverStarted === true || (end?.outputFileNote ?? job.fileNote) === undefined ? {} : { outputFileNote: end?.outputFileNote ?? job.fileNote }),
    ...(end?.result === undefined ? {} : { kept: true }),
  }
}

/**
 * A logged job as consumers see one: nothing in memory, `earlier`, and ended as its log says. One
 * with no end logged yet is having it read from its child session: it reads `running` until then,
 * never an end that may still change (`killed` would be taken for final, then turn into `done`).
 */
function earlierInfo(job: LoggedJob, sessionId: string, agent: string): JobInfo {
  const { outputPath, outputFileNote, kept: _kept, ...facts } = factsOf(job)
  if (job.end === undefined) facts.status = 'running'
  return Object.freeze({
    ...facts,
    // Branded on the way in: the log holds ids this package made.
    jobId: job.start.jobId as JobId,
    kind: job.start.kind,
    sessionId,
    agent,
    startedAt: job.startedAt ?? 0,
    ...(job.endedAt === undefined ? {} : { endedAt: job.endedAt }),
    unreadChars: 0,
    droppedChars: 0,
    ...(outputPath === undefined ? {} : { outputPath }),
    ...(outputFileNote === undefined ? {} : { outputFileNote }),
    earlier: true,
  })
}

/** Resolves when `promise` settles, `timeoutMs` passes or `signal` aborts, whichever is first. */
async function until(promise: Promise<unknown>, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return
  // setTimeout fires at once for a delay past 2^31 - 1 ms; NaN or a negative delay means no wait.
  const delay = Math.min(Math.max(Number.isNaN(timeoutMs) ? 0 : timeoutMs, 0), MAX_TIMER_MS)
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  await Promise.race([
    promise,
    new Promise<void>((resolve) => { timer = setTimeout(resolve, delay) }),
    new Promise<void>((resolve) => {
      onAbort = resolve
      signal?.addEventListener('abort', onAbort, { once: true })
    }),
  ])
  clearTimeout(timer)
  if (onAbort) signal?.removeEventListener('abort', onAbort)
}

/** Whether the job's producer recorded anything of its processes (a group, a marker). */
function recordedProcesses(job: LoggedJob): boolean {
  return Object.keys(job.record).length > 0
}
