/**
 * Reading an adapter's stream so that a cancelled attempt stops waiting at once, whatever the
 * adapter does with its own signal.
 */

/**
 * Reads `source` but stops waiting the moment `signal` aborts (rejecting with its reason), so an
 * adapter that ignores its signal cannot hold a cancelled call open. One promise per read, settled
 * by the read or by the abort (a race per read would also leave a reaction on the abort's promise
 * for every read of the stream). Not a generator: a read costs no hop of its own.
 */
export class AbortableReads<T> {
  private readonly iterator: AsyncIterator<T>
  private stop: ((reason: unknown) => void) | undefined
  private readonly onAbort = () => this.stop?.(this.signal.reason)

  constructor(source: AsyncIterable<T>, private readonly signal: AbortSignal) {
    this.iterator = source[Symbol.asyncIterator]()
    signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /** The source's next read; rejects with the abort's reason once `signal` aborts. */
  async next(): Promise<IteratorResult<T>> {
    if (this.signal.aborted) throw this.signal.reason as Error
    try {
      return await new Promise<IteratorResult<T>>((resolve, reject) => {
        this.stop = reject
        this.iterator.next().then(resolve, reject)
      })
    } finally {
      this.stop = undefined
    }
  }

  /** Stops listening and tells the source we are done, without waiting; false when it cannot be told. */
  close(): boolean {
    this.stop = undefined
    this.signal.removeEventListener('abort', this.onAbort)
    if (!this.iterator.return) return false
    try {
      void Promise.resolve(this.iterator.return()).catch(() => {})
    } catch {
      // A `return` that throws at once is ignored like one that rejects: the attempt still ends.
    }
    return true
  }
}
