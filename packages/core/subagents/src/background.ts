/**
 * `run_in_background`: the child runs as a `subagent-<n>` job of `ctx.jobs`. The call returns once
 * the child exists; its progress is the job's output; the job ends when the child's turn does, with
 * its outcome. The outer call's signal is not watched afterwards: only the job's (job_kill, the
 * owner's end, the jobs service going) stops the child, and disposing this plugin interrupts it.
 */

import type { AgentEvent } from '@rein/agent'
import { ReinError, formatMoney } from '@rein/base'
import type { JobRun, JobService } from '@rein/jobs'
import { checkChild, startChild, type Holder, type RunDeps, type StartedChild } from './run.ts'
import type { BackgroundStarted, SubagentRequest, SubagentResult } from './types.ts'

/**
 * Starts a child as a job owned by the calling run's agent; `SUBAGENT_NO_JOBS` without `ctx.jobs`,
 * `SUBAGENT_BACKGROUND_LIMIT` when the calling session runs `maxBackground` already.
 */
export async function startInBackground(deps: RunDeps, request: SubagentRequest): Promise<BackgroundStarted> {
  const jobs = deps.jobs()
  if (!jobs) {
    throw new ReinError('SUBAGENT_NO_JOBS', 'run_in_background needs background jobs (the @rein/jobs plugin), and none are loaded here: call subagent without it')
  }
  // A malformed call is told what is wrong with it, not that it came at the cap.
  const checked = checkChild(deps, request)
  const unreserve = reserve(deps, jobs, request.call.sessionId)
  const holder: Holder = { callId: request.call.callId, signal: request.call.signal, background: true }
  let started: StartedChild
  try {
    started = await startChild(deps, request, holder, checked)
  } catch (error) {
    unreserve()
    throw error
  }
  let release: () => void = () => {}
  const body = new Promise<void>((resolve) => { release = resolve })
  deps.background.add(body)
  void body.then(() => deps.background.delete(body))
  try {
    const handle = jobs.start({
      kind: 'subagent',
      label: request.description ?? request.prompt,
      // startChild checked that the call has one.
      owner: request.call.identity!,
      signal: request.call.signal,
      // After a crash, `jobs/lost` hands this back: the child's log is then closed as interrupted.
      ref: started.agent.session.id,
      run: (job) => runJob(deps, jobs, job, started, request).finally(release),
    })
    holder.jobId = handle.jobId
    return { kind: 'background', sessionId: started.agent.session.id, jobId: handle.jobId }
  } catch (error) {
    // The body never ran: the child is closed here, or it would stay open behind a failed call.
    release()
    await started.finish()
    throw error
  } finally {
    // Listed by jobs now (or never started): from here jobs' own list counts it.
    unreserve()
  }
}

/**
 * Holds one of the calling session's `maxBackground` places until its job is listed: starts made
 * side by side in one answer all await the child's creation, and each counts the others meanwhile.
 * A place frees when the job ends (done, failed or killed, as `job_list` shows it). Only this
 * process's jobs count: a crashed process's children are not continued (their logs are closed).
 */
function reserve(deps: RunDeps, jobs: JobService, owner: string | undefined): () => void {
  // No session: startChild refuses the call (NO_RUN_IDENTITY).
  if (owner === undefined) return () => {}
  const running = jobs.list({ sessionId: owner }).filter((info) => info.kind === 'subagent' && info.sessionId === owner && info.status === 'running').map((info) => info.jobId)
  const starting = deps.starting.get(owner) ?? 0
  const { maxBackground } = deps.config
  if (running.length + starting >= maxBackground) throw limitError(running, starting, maxBackground)
  deps.starting.set(owner, starting + 1)
  let held = true
  return () => {
    if (!held) return
    held = false
    const left = (deps.starting.get(owner) ?? 1) - 1
    if (left > 0) deps.starting.set(owner, left)
    else deps.starting.delete(owner)
  }
}

function limitError(running: readonly string[], starting: number, maxBackground: number): ReinError {
  const count = running.length + starting
  const which = [...running, ...(starting > 0 ? [`${starting} starting in this answer`] : [])].join(', ')
  const state = starting > 0 ? 'running or starting' : 'running'
  return new ReinError('SUBAGENT_BACKGROUND_LIMIT', `${count} background subagent${count === 1 ? ' of yours is' : 's of yours are'} ${state} (${which}), the most one session may run at once: wait for one to end (its notice comes as a message; job_output with wait_ms waits for it) or job_kill one you no longer need, then start this one; or run it without run_in_background. The limit is maxBackground (${maxBackground}) in the @rein/subagents config, which the user can raise`, { details: { running, starting, maxBackground } })
}

/** The job's body: the child's one turn. The job ends with it; the child is always closed. */
async function runJob(deps: RunDeps, jobs: JobService, job: JobRun, started: StartedChild, request: SubagentRequest): Promise<void> {
  const child = started.agent
  const owner = request.call.identity!
  started.watch(progress((text) => job.output(text)))
  const stop = () => {
    // The jobs service going away or the process exiting interrupts the child (a resume may
    // continue it); a kill or the owner's end cancels it.
    const cause = jobs.list(owner).find((info) => info.jobId === job.jobId)?.cause
    if (cause === 'disposed' || cause === 'exit') void child.interrupt()
    else child.cancel('the subagent job was killed')
  }
  job.signal.addEventListener('abort', stop, { once: true })
  try {
    const value = started.outcome(await child.send(request.prompt))
    // The answer goes into the job's output: jobs' own notice (written to the owner's log first,
    // delivered again after a crash) tells the model to read it with job_output. The output lives
    // in memory only, so the answer is also kept with the job's end in the owner's log: a parent
    // that closes (or whose process ends) before reading it gets it from job_output once resumed.
    const answer = answerLines(value)
    job.output(answer)
    job.done({ result: answer })
  } catch (error) {
    // SUBAGENT_FAILED, _CANCELLED or _INTERRUPTED: the message carries the reason, the partial
    // answer and the session id, and jobs' notice carries the message. Ignored if killed first.
    job.fail(error)
  } finally {
    job.signal.removeEventListener('abort', stop)
    await started.finish()
  }
}

/** The job output's last lines: the answer and what it cost, so `job_output` shows them whole after the progress. */
function answerLines(value: SubagentResult): string {
  const answer = value.answer.trim() === '' ? '(the subagent gave no answer)' : value.answer
  const cost = value.cost === undefined ? '' : `, cost ${formatMoney(value.cost)}`
  return `\n\nThe subagent answered (subagent session ${value.sessionId}${cost}):\n${answer}\n`
}

/** The job's output: the child's text as it streams, and one line per tool call it makes. */
function progress(write: (text: string) => void): (event: AgentEvent) => void {
  let atLineStart = true
  const emit = (text: string) => {
    if (text === '') return
    write(text)
    atLineStart = text.endsWith('\n')
  }
  return (event) => {
    if (event.type === 'text-delta') emit(event.text)
    else if (event.type === 'tool-start') emit(`${atLineStart ? '' : '\n'}[${event.name}]\n`)
    else if (event.type === 'tool-end' && event.isError) emit(`[${event.name} failed${event.code ? `: ${event.code}` : ''}]\n`)
  }
}

