/**
 * Runs the body under the execute wrappers: wrappers outermost-first, then the deadline (the tool's
 * `timeoutMs`, else the registry's default), then the body raced against its signal so a body that
 * ignores cancellation cannot hold the call.
 */

import { ReinError } from '@rein/base'
import type { DispatchOutcome, ExecuteWrapper, ToolCall } from './hooks.ts'
import type { PreparedTool } from './registration.ts'
import { isThenable } from './thenable.ts'
import { reinErrorParts, thrownText } from './thrown-value.ts'
import { STOPPED, untilStopped } from './until-stopped.ts'

/** The body, given its signal on demand. */
type Body = (lazy: LazySignal) => unknown

/** How the body runs: its deadline, the grace a cancelled body gets, and its tool (where its stop is kept while it runs). */
interface BodyLimits {
  timeoutMs: number
  graceMs: number
  tool: Pick<PreparedTool, 'running' | 'removed'>
}

/** Returns the outcome; never rejects. A wrapper's throw becomes `{ok: false, error}`. */
export async function dispatch(
  call: ToolCall,
  wrappers: readonly ExecuteWrapper[],
  signal: AbortSignal,
  limits: BodyLimits,
  body: Body,
): Promise<DispatchOutcome> {
  const produced = new WeakSet<DispatchOutcome>()

  const step = async (index: number, current: AbortSignal): Promise<DispatchOutcome> => {
    const wrapper = wrappers[index]
    if (!wrapper) {
      const outcome = wrapperStopped(await runWithDeadline(body, current, limits, call.toolName), current)
      produced.add(outcome)
      return outcome
    }
    let called = false
    let misused = false
    const next = (swapped?: AbortSignal) => {
      if (called) {
        // Rejected and handled here: a wrapper that does not await its second next() must not leave
        // an unhandled rejection (it ends the process); the call fails with WRAPPER_MISUSE instead.
        misused = true
        const twice = Promise.reject(new ReinError('WRAPPER_MISUSE', 'an execute wrapper called next() twice'))
        twice.catch(() => {})
        return twice
      }
      called = true
      // A wrapper may tighten the signal, never loosen it: the caller's cancellation always applies.
      const fused = swapped && swapped !== current ? AbortSignal.any([current, swapped]) : current
      const inner = step(index + 1, fused)
      // Handled here too: a wrapper that drops the promise (already misuse) must not leave an inner
      // wrapper's WRAPPER_MISUSE as an unhandled rejection; one that awaits it still sees the rejection.
      inner.catch(() => {})
      return inner
    }
    // Raced with its signal: a wrapper that never settles must not hold a cancelled call.
    // With a grace the body may still answer after the abort: the wrapper gets as long to pass it on.
    const outcome = await untilStopped(wrapper(Object.freeze({ ...call, signal: current }), next), current, limits.graceMs)
    if (outcome === STOPPED) {
      const stopped = wrapperStopped({ ok: false, error: current.reason }, current)
      produced.add(stopped)
      return stopped
    }
    if (misused) throw new ReinError('WRAPPER_MISUSE', 'an execute wrapper called next() twice')
    if (!produced.has(outcome)) {
      throw new ReinError('WRAPPER_MISUSE', 'an execute wrapper returned a result that next() did not produce')
    }
    return outcome
  }

  /** A body stopped by a signal a wrapper swapped in (not the caller's): `ABORTED`, not the signal's bare reason. */
  const wrapperStopped = (outcome: DispatchOutcome, current: AbortSignal): DispatchOutcome => {
    if (outcome.ok || current === signal || signal.aborted || !current.aborted || outcome.error !== current.reason || reinErrorParts(outcome.error) !== undefined) return outcome
    const why = thrownText(outcome.error) ?? 'its signal aborted'
    return { ok: false, error: new ReinError('ABORTED', `${call.toolName} was stopped by an execute wrapper (${why}); its effects may be partial`) }
  }

  try {
    return await step(0, signal)
  } catch (error) {
    return { ok: false, error }
  }
}

/**
 * The body's signal, made only when the body reads it: most bodies never do, and making an
 * AbortSignal costs more than the rest of a trivial call. Read after the call was stopped, it is
 * already aborted with the reason.
 */
class LazySignal {
  private controller: AbortController | undefined
  private stopped = false
  private reason: unknown

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.stopped) this.controller.abort(this.reason)
    }
    return this.controller.signal
  }

  stop(reason: unknown) {
    if (this.stopped) return
    this.stopped = true
    this.reason = reason
    this.controller?.abort(reason)
  }
}

/**
 * The body, innermost, so outer wrappers measure the deadline. Its signal aborts when `outer`
 * aborts or the deadline passes; either way the call ends then, whatever the body does. A body
 * that answers synchronously cannot hang, so it costs no timer or listener.
 */
function runWithDeadline(body: Body, outer: AbortSignal, limits: BodyLimits, toolName: string): DispatchOutcome | Promise<DispatchOutcome> {
  const { timeoutMs, graceMs, tool } = limits
  if (outer.aborted) return { ok: false, error: outer.reason }
  if (tool.removed) return { ok: false, error: new ReinError('ABORTED_BEFORE_DISPATCH', `${toolName} was removed before it started (its plugin was disposed)`) }
  const lazy = new LazySignal()
  let answer: unknown
  try {
    answer = body(lazy)
  } catch (error) {
    return { ok: false, error }
  }
  if (!isThenable(answer)) return { ok: true, value: answer }
  const pending = answer
  // One promise settled by whichever comes first: the body, the caller's abort, or the deadline.
  return new Promise<DispatchOutcome>((resolve) => {
    let grace: ReturnType<typeof setTimeout> | undefined
    // With a grace, the body hears the cancel (or its tool's removal) and may still end with its
    // own answer or error (what it had).
    const cancel = (reason: unknown) => {
      if (graceMs <= 0) return stop(reason)
      if (grace !== undefined) return
      lazy.stop(reason)
      grace = setTimeout(() => stop(reason), graceMs)
    }
    const onAbort = () => cancel(outer.reason)
    const finish = (outcome: DispatchOutcome) => {
      clearTimeout(timer)
      clearTimeout(grace)
      outer.removeEventListener('abort', onAbort)
      tool.running.delete(cancel)
      resolve(outcome)
    }
    const stop = (reason: unknown) => {
      lazy.stop(reason)
      finish({ ok: false, error: reason })
    }
    outer.addEventListener('abort', onAbort, { once: true })
    tool.running.add(cancel)
    const timer = setTimeout(() => stop(new ReinError('TOOL_TIMEOUT', `${toolName} did not finish within ${timeoutMs} ms`)), timeoutMs)
    // Promise.resolve: a thenable whose `then` throws becomes a rejection, not a throw here.
    Promise.resolve(pending).then((value) => finish({ ok: true, value }), (error: unknown) => finish({ ok: false, error }))
  })
}
