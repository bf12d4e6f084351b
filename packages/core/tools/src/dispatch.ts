/**
 * Runs the body under the execute wrappers: wrappers outermost-first, then the tool's own deadline,
 * then the body raced against its signal so a body that ignores cancellation cannot hold the call.
 */

import { ReinError } from '@rein/base'
import type { DispatchOutcome, ExecuteWrapper, ToolCall } from './hooks.ts'

export type Body = (signal: AbortSignal) => unknown

/** Returns the outcome; never rejects. A wrapper's throw becomes `{ok: false, error}`. */
export async function dispatch(
  call: ToolCall,
  wrappers: readonly ExecuteWrapper[],
  signal: AbortSignal,
  body: Body,
): Promise<DispatchOutcome> {
  const produced = new WeakSet<DispatchOutcome>()
  const chain = call.tool.timeoutMs === undefined ? wrappers : [...wrappers, deadline(call.tool.timeoutMs, call.toolName)]

  const step = async (index: number, current: AbortSignal): Promise<DispatchOutcome> => {
    const wrapper = chain[index]
    if (!wrapper) {
      const outcome = await raceSignal(body, current)
      produced.add(outcome)
      return outcome
    }
    let called = false
    const next = (swapped?: AbortSignal) => {
      if (called) return Promise.reject(new ReinError('WRAPPER_MISUSE', 'an execute wrapper called next() twice'))
      called = true
      // A wrapper may tighten the signal, never loosen it: the caller's cancellation always applies.
      const fused = swapped && swapped !== current ? AbortSignal.any([current, swapped]) : current
      return step(index + 1, fused)
    }
    const outcome = await wrapper({ ...call, signal: current }, next)
    if (!produced.has(outcome)) {
      throw new ReinError('WRAPPER_MISUSE', 'an execute wrapper returned a result that next() did not produce')
    }
    return outcome
  }

  try {
    return await step(0, signal)
  } catch (error) {
    return { ok: false, error }
  }
}

async function raceSignal(body: Body, signal: AbortSignal): Promise<DispatchOutcome> {
  if (signal.aborted) return { ok: false, error: signal.reason }
  let onAbort!: () => void
  const aborted = new Promise<DispatchOutcome>((resolve) => {
    onAbort = () => resolve({ ok: false, error: signal.reason })
    signal.addEventListener('abort', onAbort, { once: true })
  })
  const run = (async (): Promise<DispatchOutcome> => {
    try {
      return { ok: true, value: await body(signal) }
    } catch (error) {
      return { ok: false, error }
    }
  })()
  try {
    return await Promise.race([run, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

/** The tool's declared `timeoutMs`, enforced as the innermost wrapper so outer wrappers measure it. */
function deadline(timeoutMs: number, toolName: string): ExecuteWrapper {
  return async (_call, next) => {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      controller.abort(new ReinError('TOOL_TIMEOUT', `${toolName} did not finish within ${timeoutMs} ms`))
    }, timeoutMs)
    try {
      return await next(controller.signal)
    } finally {
      clearTimeout(timer)
    }
  }
}
