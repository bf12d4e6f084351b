/**
 * `run_in_background`: the command becomes a `bash-<n>` job of `ctx.jobs`. Its output goes to the
 * job's bounded buffer (for `job_output`) and to a spill file (up to its cap). The call returns once the
 * command runs and its marker and process group are in the session log, so a later `rein resume`
 * can reap it after a crash.
 */

import type { JobHandle, JobRun, JobService } from '@rein/jobs'
import { ReinError } from '@rein/base'
import type { BackgroundRequest, StartInBackground } from './bash-tool.ts'
import type { StartedValue } from './bash-value.ts'
import { claimMarker } from './call-marker.ts'
import { MARKER_VARIABLE, type ShellExit } from './shell.ts'
import { capNote, SpillSink } from './spill-sink.ts'
import { StreamFormatter } from './stream-format.ts'

/** Starts background commands on the jobs service `jobs` returns at the time of the call. */
export function createBackground(jobs: () => JobService | undefined): StartInBackground {
  return async (request) => {
    const service = jobs()
    const owner = request.run.identity
    if (!service || !owner) {
      const why = service ? 'this call has no agent run to own the job' : 'no jobs service is loaded'
      throw new ReinError('BACKGROUND_UNAVAILABLE', `run_in_background is not available here (${why}); run the command without it`)
    }
    const sink = await SpillSink.open(request.run.spill, 'output', request.maxOutputFileBytes)
    // Derived from the session and the call, like a foreground call's; released when the job ends.
    const claimed = claimMarker(request.run)
    let ready: () => void = () => {}
    const running = new Promise<void>((resolve) => { ready = resolve })
    let handle: JobHandle
    try {
      handle = service.start({
        kind: 'bash',
        label: request.command,
        owner,
        signal: request.run.signal,
        ...(sink.path === undefined ? {} : { outputPath: sink.path }),
        run: (job) => runJob(job, request, claimed.marker, sink, ready).finally(() => {
          claimed.release()
          ready()
        }),
      })
    } catch (error) {
      claimed.release()
      await sink.close()
      throw error
    }
    // Running and recorded (or already over: job_output tells how).
    await running
    const value: StartedValue = { kind: 'background', jobId: handle.jobId, outputPath: sink.path ?? null }
    // Like the handle's own, `done` is not enumerable: the model never sees it, while an execute
    // wrapper (checkpoint's snapshot) can wait for the job to end.
    Object.defineProperty(value, 'done', { value: handle.done, enumerable: false })
    return value
  }
}

/** The job's body: record, run, report. The job ends when this returns; `ready` once it runs and is recorded. */
async function runJob(job: JobRun, request: BackgroundRequest, marker: string, sink: SpillSink, ready: () => void): Promise<void> {
  const formatter = new StreamFormatter()
  const emit = (text: string) => {
    if (text === '') return
    job.output(text)
    return sink.write(text)
  }
  // Stopped by the job (kill, the owner going, disposal) or because it could not be recorded.
  const stop = new AbortController()
  const signal = AbortSignal.any([job.signal, stop.signal])
  let unrecorded: unknown
  let exit: ShellExit
  try {
    // Recorded before the command starts: a crash from here on leaves something to reap.
    await job.record({ marker: `${MARKER_VARIABLE}=${marker}` })
    exit = await request.shell.run({
      command: request.command,
      cwd: request.cwd,
      signal,
      marker,
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      onStart: (process) => {
        // Unrecorded, nothing could reap the job after a crash: stop it rather than run it blind.
        job.record({ processGroup: process.processGroup }).then(ready, (error: unknown) => {
          unrecorded = error
          stop.abort()
        })
      },
      onOutput: (chunk, stream) => emit(formatter.write(chunk, stream)),
    })
    await emit(formatter.end())
  } catch (error) {
    await sink.close()
    job.fail(error)
    return
  }
  const notes = [
    exit.leftovers > 0 ? `[stopped ${exit.leftovers} process${exit.leftovers === 1 ? '' : 'es'} the command left running]` : '',
    exit.timedOut ? `[timed out after ${request.timeoutMs} ms]` : '',
  ].filter((note) => note !== '')
  if (notes.length > 0) await emit(`${notes.join('\n')}\n`)
  await sink.close()
  // The file ends with the same line (see SpillSink.close); the model reads it here.
  if (sink.unsavedBytes > 0 && sink.path !== undefined) job.output(`${capNote(sink.cap, sink.unsavedBytes)}\n`)
  if (unrecorded === undefined) job.done({ exitCode: exit.exitCode, signal: exit.signal })
  else job.fail(unrecorded)
}
