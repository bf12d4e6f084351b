/** Tells a promise-like from a plain value without awaiting it. */

/** Whether `value` has a `then` method, as `await` would treat it. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
