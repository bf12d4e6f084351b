/**
 * The `ctx.jobs` service: background jobs owned by agents. It registers the job tools while
 * `ctx.tools` is there, defines its log events while `ctx.sessions` is, delivers finish notices at
 * the owners' step boundaries, and kills and awaits every job when it is disposed.
 */

import { Context, Service } from '@deepseek-ai/cordis'
import type { AgentService } from '@rein/agent'
import type { Session, SessionService } from '@rein/session'
import { JobsConfig } from './config.ts'
import { JOB_EVENT_TYPES } from './job-log.ts'
import { JobRuntime } from './runtime.ts'
import { createJobTools } from './tools.ts'
import type { JobHandle, JobInfo, JobOutput, JobViewer, LostJob, SettleReport, StartJob } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    jobs: JobService
  }
  interface Events {
    /**
     * A job a dead process left without an end was reaped: its producer may tidy up what it worked on. Its end is logged
     * `killed: lost` first, or, when its `ref` names its child session, after that session's log is read (as it shows the job ended).
     */
    'jobs/lost'(job: LostJob): void
  }
}

/** Options of `settle`. */
export interface SettleOptions {
  /** Default: the `exitWaitMs` config (10 minutes). */
  timeoutMs?: number
  /** Only jobs this session sees (its own and its subagents'). Default: every job. */
  sessionId?: string
  /** Aborting stops the wait: the jobs still running are killed at once. */
  signal?: AbortSignal
}

/** `ctx.jobs`: starts, reads, kills and waits for background jobs; one per composition, disposed with its row. */
export class JobService extends Service {
  static readonly Config = JobsConfig

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _runtime: JobRuntime

  constructor(ctx: Context, config: JobsConfig) {
    super(ctx, 'jobs')
    const logger = ctx.logger('jobs')
    // Looked up when used, never injected: a swap of the agents row must not restart running jobs.
    const agent = (sessionId: string) => (ctx.get('agents') as AgentService | undefined)?.find(sessionId)
    // A job left without an end whose ref names its child session ended as that session's log says.
    const load = (sessionId: string) => (ctx.get('sessions') as SessionService | undefined)?.load(sessionId)
    const runtime = new JobRuntime(config, agent, logger, (lost) => ctx.emit('jobs/lost', lost), load)
    this._runtime = runtime
    ctx.inject(['sessions'], (inner) => {
      for (const type of JOB_EVENT_TYPES) inner.sessions.defineEvent(type, { ignorable: true })
    })
    ctx.inject(['tools'], (inner) => {
      const tools = createJobTools(runtime, config)
      inner.tools.register(tools.jobOutput)
      inner.tools.register(tools.jobList)
      inner.tools.register(tools.jobKill)
    })
    ctx.on('agent/turn-start', (event) => runtime.visitSession(event.identity.sessionId))
    ctx.on('agent/step-end', (event) => runtime.boundary(event.identity.sessionId))
    ctx.on('agent/turn-end', (event) => runtime.boundary(event.identity.sessionId))
    // Registered last on purpose: a fiber starts its disposers in reverse order, so this one's
    // synchronous part (every job ended and logged) runs before the event types above go away.
    ctx.effect(() => () => runtime.dispose(), 'jobs: kill and await every job')
  }

  /**
   * Starts a job owned by `owner`'s agent and runs its body at once. Throws `JOB_INVALID`,
   * `JOB_START_ABORTED` (the caller's signal is aborted), `JOB_OWNER_GONE` (no live agent owns the
   * session) or `JOBS_CLOSED` — each before the body runs.
   */
  start(options: StartJob): JobHandle {
    return this._runtime.start(options)
  }

  /** The jobs `viewer` sees, oldest first, ended ones included while their owner's session is open. */
  list(viewer: JobViewer): JobInfo[] {
    return this._runtime.list(viewer)
  }

  /**
   * Takes the output not read before (one read position per job, shared by every viewer). A job of
   * an earlier process (from the viewer's session log) answers with `info.earlier` and, as its
   * output, the result its end kept (`JobExit.result`), every time, or none; right after `reap`, one
   * whose end is still being read from its child session reads `running` (no end) until then, never
   * an end that may still change (`wait` first for its end).
   * `JOB_NOT_FOUND` for a job the viewer cannot see.
   */
  read(jobId: string, viewer: JobViewer): JobOutput {
    return this._runtime.read(jobId, viewer)
  }

  /** Kills a job (no-op once it ended) and waits for its body to return, at most `killGraceMs`. */
  async kill(jobId: string, viewer: JobViewer): Promise<JobInfo> {
    return (await this._runtime.kill(jobId, viewer)).info
  }

  /** The job's state once it ended, `timeoutMs` passed, or `signal` aborted — whichever comes first. */
  wait(jobId: string, timeoutMs: number, viewer: JobViewer, signal?: AbortSignal): Promise<JobInfo> {
    return this._runtime.wait(jobId, timeoutMs, viewer, signal)
  }

  /** Calls `listener` with every job that ends, until disposed (with the calling plugin). A throwing listener is logged. */
  onDone(listener: (info: JobInfo) => void): () => Promise<void> {
    const runtime = this._runtime
    return this.ctx.effect(() => runtime.onDone(listener), 'jobs.onDone')
  }

  /**
   * Settles now what an earlier process left in a live agent's session — reaps its jobs' processes,
   * queues the `lost` and owed notices — rather than at the session's first turn. Call it right after
   * `agents.resume`; later calls (and the first turn) do nothing more.
   */
  reap(sessionId: string): void {
    this._runtime.visitSession(sessionId)
  }

  /**
   * For a session no agent will continue in this process (a lost subagent's log being closed):
   * stops what its jobs left running and logs each job never ended (`jobs/lost` fires for each) as
   * its child session shows it ended, else `killed: lost`. Its notices wait for whoever resumes it. Call it with the session open.
   */
  reapClosed(session: Session): Promise<void> {
    return this._runtime.reapClosed(session)
  }

  /**
   * Jobs end with their process: waits for running jobs up to `timeoutMs`, kills the rest, records
   * it in their owners' logs and saves them. Call it before closing the agents (`rein run` does).
   */
  settle(options: SettleOptions = {}): Promise<SettleReport> {
    return this._runtime.settle(options)
  }
}
