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

/** A listener as cordis keeps it: the callback and the context that registered it. */
interface Hook {
  readonly callback: (...args: never[]) => unknown
}

type Hooks = Readonly<Record<string | symbol, readonly unknown[] | undefined>>

/**
 * A context's listener lists, looked up once per context: `ctx.events` on a cordis context goes
 * through its tracing proxy (a few microseconds), and the event service, the kernel's, lives as long
 * as the context does.
 */
const hooksByContext = new WeakMap<ListenerSource, Hooks>()

function hooksOf(ctx: ListenerSource): Hooks | undefined {
  let hooks = hooksByContext.get(ctx)
  if (hooks === undefined) {
    hooks = ctx.events?._hooks
    if (hooks !== undefined) hooksByContext.set(ctx, hooks)
  }
  return hooks
}

/**
 * True when a listener for `name` is registered on `ctx`'s event service, or one for
 * `internal/dispatch` (which sees every dispatch). When the service does not have the shape cordis
 * 4.0 gives it, answers true, so a caller dispatches as it would without the check.
 */
export function hasListeners(ctx: ListenerSource, name: string): boolean {
  const hooks = hooksOf(ctx)
  if (hooks === undefined) return true
  return (hooks[name]?.length ?? 0) > 0 || (!name.startsWith('internal/') && (hooks['internal/dispatch']?.length ?? 0) > 0)
}

/**
 * Calls the listeners of `name` with `args`, as `ctx.parallel` would without waiting: each one,
 * in order, its throw or rejection handed to `report` and never to the caller. Read from the event
 * service's list directly: a dispatch through a plugin's context goes through cordis's tracing
 * proxies, several objects per call, which adds up on a per-event path. When the list is not
 * there, or something observes every dispatch (`internal/dispatch`), it falls back to `fallback`
 * (the context's own `parallel`), so nothing is skipped. Like `ctx.parallel(name, …)`, listeners
 * get no `this` and no context filter applies.
 */
export function callListeners(ctx: ListenerSource, name: string, args: readonly unknown[], report: (error: unknown) => void, fallback: () => Promise<unknown>): void {
  const hooks = hooksOf(ctx)
  if (hooks === undefined || (hooks['internal/dispatch']?.length ?? 0) > 0) {
    fallback().catch((error: unknown) => {
      // cordis's `parallel` rejects with every listener's failure in one AggregateError.
      if (error instanceof AggregateError) for (const each of error.errors as unknown[]) report(each)
      else report(error)
    })
    return
  }
  const list = hooks[name] as readonly Hook[] | undefined
  if (list === undefined || list.length === 0) return
  // A copy: a listener may remove itself (or others) while they are called.
  for (const hook of list.slice()) {
    try {
      const returned: unknown = Reflect.apply(hook.callback, null, args)
      if (returned instanceof Promise) returned.catch(report)
    } catch (error) {
      report(error)
    }
  }
}

/** What `eventSender` needs of a context: its event service, and `parallel` for the fallback. */
export interface EventContext extends ListenerSource {
  parallel(name: string, ...args: never[]): Promise<unknown>
}

/** Listener signatures by event name, as cordis's `Events` declares them. */
type EventMap = Record<string, (...args: never[]) => unknown>

/** Sends events on one context (see `eventSender`), typed by the map `E` of the events it sends. */
export interface EventSender<E extends EventMap = EventMap> {
  /** Whether `name` has listeners: build an event only when this is true. */
  has(name: keyof E & string): boolean
  /** Calls the listeners of `name` with `args` as `callListeners` does; nothing when none listens. */
  send<K extends keyof E & string>(name: K, args: Parameters<E[K]>): void
}

/**
 * Per-event dispatch for a service: the context's event service read once (a read through a
 * plugin's context goes through cordis's tracing proxy), listeners called directly, and a failing
 * listener handed to `report` with the event's name.
 */
export function eventSender<E extends EventMap = EventMap>(ctx: EventContext, report: (name: string, error: unknown) => void): EventSender<E> {
  const source: ListenerSource = { events: ctx.events }
  // Read only for the fallback: `ctx.parallel` is another read through the proxy.
  const parallel = (name: string, args: readonly unknown[]) => ctx.parallel(name, ...(args as never[]))
  return {
    has: (name) => hasListeners(source, name),
    send: (name, args) => {
      if (!hasListeners(source, name)) return
      callListeners(source, name, args, (error) => report(name, error), () => parallel(name, args))
    },
  }
}
