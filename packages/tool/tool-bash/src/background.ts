/**
 * `run_in_background`: the command becomes a `bash-<n>` job of `ctx.jobs`. Its output goes to the
 * job's bounded buffer (for `job_output`) and to a spill file (up to its cap). The call returns once the
 * command runs and its marker and process group are in the session log, so a later `rein resume`
 * can reap it after a crash; a command that never started fails the call with the reason.
 */

import type { JobHandle, JobRun, JobService } from '@rein/jobs'
import { groupDigits, ReinError } from '@rein/base'
import type { RunIdentity } from '@rein/tools'
import type { BackgroundRequest, StartInBackground } from './bash-tool.ts'
import type { StartedValue } from './bash-value.ts'
import { claimMarker } from './call-marker.ts'
import { MARKER_VARIABLE, type ShellExit } from './shell.ts'
import { capNote, formatBytes, SpillSink } from './spill-sink.ts'
import { StreamFormatter } from './stream-format.ts'

/** Starts background commands on the jobs service `jobs` returns at the time of the call. */
export function createBackground(jobs: () => JobService | undefined): StartInBackground {
  return async (request) => {
    const { service, owner } = available(jobs(), request)
    const sink = await SpillSink.open(request.run.spill, 'output', request.maxOutputFileBytes)
    // Derived from the session and the call, like a foreground call's; released when the job ends.
    const claimed = claimMarker(request.run)
    const gate = startGate()
    let handle: JobHandle
    try {
      handle = service.start({
        kind: 'bash',
        label: request.command,
        owner,
        signal: request.run.signal,
        ...(sink.path === undefined ? {} : { outputPath: sink.path }),
        run: (job) => runJob(job, request, claimed.marker, sink, gate).finally(() => {
          claimed.release()
          gate.running()
        }),
      })
    } catch (error) {
      claimed.release()
      await sink.discard()
      throw error
    }
    // Running and recorded (or already over: job_output tells how).
    const started = await gate.outcome
    if (!started.ok) {
      // This call reports the failure itself: reading the ended job tells the jobs service the
      // model knows, so no notice repeats it.
      service.read(handle.jobId, owner)
      throw started.error
    }
    const value: StartedValue = { kind: 'background', jobId: handle.jobId, outputPath: sink.path ?? null }
    // Like the handle's own, `done` is not enumerable: the model never sees it, while an execute
    // wrapper (checkpoint's snapshot) can wait for the job to end.
    Object.defineProperty(value, 'done', { value: handle.done, enumerable: false })
    return value
  }
}

/** The jobs service and the run to own the job; `BACKGROUND_UNAVAILABLE` without either. */
function available(service: JobService | undefined, request: BackgroundRequest): { service: JobService; owner: RunIdentity } {
  const owner = request.run.identity
  if (service && owner) return { service, owner }
  const why = service ? 'this call has no agent run to own the job' : 'no jobs service is loaded'
  throw new ReinError('BACKGROUND_UNAVAILABLE', `run_in_background is not available here (${why}); run the command without it`)
}

/** How a background start went: the command runs (and is recorded), or it never started, and why. */
type StartOutcome = { ok: true } | { ok: false; error: unknown }

/** Settles once, first call wins: `running()` (or the job ended some other way), or `failed(error)`. */
interface StartGate {
  readonly outcome: Promise<StartOutcome>
  running(): void
  failed(error: unknown): void
}

function startGate(): StartGate {
  let settle: (outcome: StartOutcome) => void = () => {}
  const outcome = new Promise<StartOutcome>((resolve) => { settle = resolve })
  return { outcome, running: () => settle({ ok: true }), failed: (error) => settle({ ok: false, error }) }
}

/**
 * Ends a job whose command the executor stopped without the job asking (its signal never
 * aborted): the executor was unloaded, with the bash plugin or the plugin that provides it.
 */
function stoppedByExecutor(exit: ShellExit, job: JobRun): ReinError | undefined {
  if (!exit.cancelled || job.signal.aborted) return undefined
  return new ReinError('SHELL_UNLOADED', 'the command was stopped because the bash plugin (or the shell executor) was unloaded; run it again once it is loaded, if it is still needed')
}

/** The job's body: record, run, report. The job ends when this returns; the gate opens once it runs and is recorded. */
async function runJob(job: JobRun, request: BackgroundRequest, marker: string, sink: SpillSink, gate: StartGate): Promise<void> {
  const formatter = new StreamFormatter()
  let told = false
  const emit = (text: string) => {
    if (text === '') return
    job.output(text)
    const written = sink.write(text)
    // Said at once, not only at the end: a drop note must not send the model to a file that lacks
    // what was dropped, and a killed job's output gets no last line.
    if (sink.full && !told && sink.path !== undefined) {
      told = true
      job.outputFileCut(`only its first ${formatBytes(sink.cap)}: later output was not saved (maxOutputFileBytes)`)
    }
    return written
  }
  // Stopped by the job (kill, the owner going, disposal) or because it could not be recorded.
  const stop = new AbortController()
  const signal = AbortSignal.any([job.signal, stop.signal])
  let unrecorded: unknown
  let began = false
  let exit: ShellExit
  // A progress bar redrawn with \r is held until its line ends: job_output shows where it stands,
  // worked out when it asks (a held line may be 64K characters), not on every chunk. Once the
  // pipes close (formatter.end), nothing is held.
  job.pending(() => formatter.pending())
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
        began = true
        // Unrecorded, nothing could reap the job after a crash: stop it rather than run it blind.
        job.record({ processGroup: process.processGroup }).then(() => gate.running(), (error: unknown) => {
          unrecorded = error
          stop.abort()
        })
      },
      onOutput: (chunk, stream) => emit(formatter.write(chunk, stream)),
    })
    await emit(formatter.end())
  } catch (error) {
    if (began) {
      await sink.close()
      job.fail(error)
      return
    }
    // Nothing ran (no shell, a bad folder, the marker not recorded): no output, so no file is left,
    // and the job names none from here on (it was named when the job started).
    job.neverStarted(error)
    await sink.discard()
    // The call fails with this reason.
    gate.failed(error)
    return
  }
  if (exit.leftovers > 0) await emit(`[stopped ${exit.leftovers} process${exit.leftovers === 1 ? '' : 'es'} the command left running]\n`)
  const timedOutAfterMs = exit.timedOut ? request.timeoutMs : undefined
  // The model reads the timeout in the job's status line; the file, read without it, says it last.
  if (timedOutAfterMs !== undefined) await sink.write(`[timed out after ${groupDigits(timedOutAfterMs)} ms]\n`)
  await sink.close()
  // The file ends with the same line (see SpillSink.close); the model reads it here.
  if (sink.unsavedBytes > 0 && sink.path !== undefined) job.output(`${capNote(sink.cap, sink.unsavedBytes)}\n`)
  const failure = unrecorded ?? stoppedByExecutor(exit, job)
  if (failure === undefined) job.done({ exitCode: exit.exitCode, signal: exit.signal, ...(timedOutAfterMs === undefined ? {} : { timedOutAfterMs }) })
  else job.fail(failure)
}
