/**
 * `run_in_background`: the child runs as a `subagent-<n>` job of `ctx.jobs`. The call returns once
 * the child exists; its progress is the job's output; the job ends when the child's turn does, with
 * its outcome. The outer call's signal is not watched afterwards: only the job's (job_kill, the
 * owner's end, the jobs service going) stops the child, and disposing this plugin interrupts it.
 */

import type { AgentEvent } from '@rein/agent'
import { ReinError, formatMoney } from '@rein/base'
import type { JobRun, JobService } from '@rein/jobs'
import { claimChild } from './resume.ts'
import { checkChild, startChild, type Holder, type RunDeps, type StartedChild } from './run.ts'
import { reservePlace, type Place } from './slots.ts'
import type { BackgroundStarted, SubagentRequest, SubagentResult } from './types.ts'

/**
 * Starts a child as a job owned by the calling run's agent; `SUBAGENT_NO_JOBS` without `ctx.jobs`,
 * `SUBAGENT_BACKGROUND_LIMIT` when the calling session's run tree runs `maxBackground` already.
 */
export async function startInBackground(deps: RunDeps, request: SubagentRequest): Promise<BackgroundStarted> {
  const jobs = deps.jobs()
  if (!jobs) {
    throw new ReinError('SUBAGENT_NO_JOBS', 'run_in_background needs background jobs (the @rein/jobs plugin), and none are loaded here: call subagent without it')
  }
  // A call is told what is wrong with it, or with the child it names to resume (none such, not the
  // caller's, running), not that it came at the cap.
  const checked = checkChild(deps, request)
  const holder: Holder = { callId: request.call.callId, signal: request.call.signal, background: true }
  const claimed = request.resume === undefined ? undefined : await claimChild(deps, request, request.resume, holder)
  let place: Place
  try {
    // checkChild refused a call without a run identity.
    place = reservePlace(deps.trees, jobs, request.call.identity!, deps.config.maxBackground)
  } catch (error) {
    claimed?.release()
    throw error
  }
  let started: StartedChild
  try {
    started = await startChild(deps, request, holder, claimed ? { ...checked, claimed } : checked)
  } catch (error) {
    place.release()
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
    place.listed(handle.jobId, handle.done)
    return { kind: 'background', sessionId: started.agent.session.id, jobId: handle.jobId }
  } catch (error) {
    // The body never ran: the child is closed here, or it would stay open behind a failed call.
    release()
    await started.finish()
    throw error
  } finally {
    // Listed by jobs now (or never started): from here its job holds the place.
    place.release()
  }
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

