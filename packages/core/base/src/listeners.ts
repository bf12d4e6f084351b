/**
 * Whether dispatching an event would reach anyone: the fast path for events sent per log entry or
 * per chunk, where an empty dispatch still costs a promise and an array per call.
 */

/**
 * The part of a cordis 4 context this reads: its event service's listener lists (`_hooks`, keyed by
 * event name). Structural, so @rein/base needs no cordis dependency; a cordis `Context` fits.
 */
export interface ListenerSource {
  readonly events?: { readonly _hooks?: Readonly<Record<string | symbol, readonly unknown[] | undefined>> }
}

/**
 * True when a listener for `name` is registered on `ctx`'s event service, or one for
 * `internal/dispatch` (which sees every dispatch). When the service does not have the shape cordis
 * 4.0 gives it, answers true, so a caller dispatches as it would without the check.
 */
export function hasListeners(ctx: ListenerSource, name: string): boolean {
  const hooks = ctx.events?._hooks
  if (hooks === undefined) return true
  return (hooks[name]?.length ?? 0) > 0 || (!name.startsWith('internal/') && (hooks['internal/dispatch']?.length ?? 0) > 0)
}
