/**
 * `Stop`: that something stopped, why, and who to tell. An AbortSignal's job for a package's own
 * plumbing, without one: on Node 20 every AbortSignal outlives the young-generation collections (it
 * is promoted and waits for a full one) and costs microseconds to make, where rein would make
 * several per request. What is handed to code outside the package stays an AbortSignal.
 */

export class Stop {
  private _stopped = false
  private _reason: unknown = undefined
  private readonly listeners = new Set<() => void>()

  /** Whether `stop` was called. */
  get stopped(): boolean {
    return this._stopped
  }

  /** The reason `stop` was given (undefined before). */
  get reason(): unknown {
    return this._reason
  }

  /** Stops and tells every listener, once; later calls change nothing. */
  stop(reason: unknown): void {
    if (this._stopped) return
    this._stopped = true
    this._reason = reason
    // As with an AbortSignal's listeners: one removed by an earlier one is not called, and one that
    // throws neither stops the others nor the caller; its error is thrown on its own, as an uncaught one.
    for (const listener of Array.from(this.listeners)) {
      if (!this.listeners.has(listener)) continue
      try {
        listener()
      } catch (error) {
        queueMicrotask(() => {
          throw error
        })
      }
    }
    this.listeners.clear()
  }

  /** Calls `listener` when `stop` is called (never, if it was already); returns what removes it. */
  onStop(listener: () => void): () => void {
    if (this._stopped) return () => {}
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }
}
