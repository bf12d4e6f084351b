/** Racing a hook against the caller's signal: a hook that never settles cannot hold a cancelled call. */

/** What `untilStopped` resolves with when the signal aborted first. */
export const STOPPED: unique symbol = Symbol('stopped')

/**
 * `pending`'s value, or `STOPPED` once `signal` aborts (`graceMs` later, when given), whichever
 * comes first; a rejection of `pending` before that rejects. Whatever `pending` does later is
 * handled and dropped.
 */
export function untilStopped<T>(pending: T | PromiseLike<T>, signal: AbortSignal, graceMs = 0): Promise<T | typeof STOPPED> {
  return new Promise<T | typeof STOPPED>((resolve, reject) => {
    let grace: ReturnType<typeof setTimeout> | undefined
    // Not at once: a hook that aborted the signal itself and answered in the same turn (a wrapper
    // that cancels after its body succeeded) is settling already, and its answer stands. With a
    // grace, a turn after it: the body's own grace ends in the same tick, and its answer stands too.
    const stopped = () => setImmediate(resolve, STOPPED)
    const onAbort = () => {
      if (graceMs > 0) grace = setTimeout(stopped, graceMs)
      else stopped()
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    const settled = () => {
      signal.removeEventListener('abort', onAbort)
      clearTimeout(grace)
    }
    // Promise.resolve: a thenable whose `then` throws becomes a rejection, not a throw here.
    Promise.resolve(pending).then((value) => {
      settled()
      resolve(value)
    }, (error: unknown) => {
      settled()
      reject(error)
    })
  })
}
