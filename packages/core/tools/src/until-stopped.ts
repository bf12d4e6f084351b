/** Racing a hook against the caller's signal: a hook that never settles cannot hold a cancelled call. */

/** What `untilStopped` resolves with when the signal aborted first. */
export const STOPPED: unique symbol = Symbol('stopped')

/**
 * `pending`'s value, or `STOPPED` once `signal` aborts, whichever comes first; a rejection of
 * `pending` before that rejects. Whatever `pending` does later is handled and dropped.
 */
export function untilStopped<T>(pending: T | PromiseLike<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  return new Promise<T | typeof STOPPED>((resolve, reject) => {
    // Not at once: a hook that aborted the signal itself and answered in the same turn (a wrapper
    // that cancels after its body succeeded) is settling already, and its answer stands.
    const onAbort = () => setImmediate(resolve, STOPPED)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    // Promise.resolve: a thenable whose `then` throws becomes a rejection, not a throw here.
    Promise.resolve(pending).then((value) => {
      signal.removeEventListener('abort', onAbort)
      resolve(value)
    }, (error: unknown) => {
      signal.removeEventListener('abort', onAbort)
      reject(error)
    })
  })
}
