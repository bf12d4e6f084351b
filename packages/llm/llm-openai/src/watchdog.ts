/**
 * `ResponseWatchdog`: how long a server may stay silent while we wait on it — for the status line
 * and headers, or for any body read, error bodies included. Only time spent waiting on the server
 * counts: a consumer busy with a chunk (awaiting, or blocking the event loop) never trips it.
 */

import { Stop } from '@rein/base'
import { LlmError } from '@rein/llm'

/** One response's silence limit and stop; `wait` every promise that waits on the server. */
export class ResponseWatchdog {
  /** Stopped by the silence limit or the caller's abort; the transport tears the request down on it. */
  readonly stop = new Stop()
  /** Made only when asked for: the adapter's own path needs none (see `Stop`). */
  private controller: AbortController | undefined
  private readonly timer: NodeJS.Timeout
  private waiting = false
  /** Rejects the wait in progress; set while one is (one at a time, as the response is read). */
  private rejectWait: ((reason: unknown) => void) | undefined
  private readonly onCallerAbort = () => this.end(this.caller?.reason)
  /** What the response is at, for the timeout message. */
  phase: 'headers' | 'body' = 'headers'

  /** `label` names the server in messages; `caller` is the request's own signal. */
  constructor(private readonly label: string, readonly idleMs: number, private readonly caller?: AbortSignal) {
    // One timer per response, re-armed as each wait starts: no timer churn per chunk. It fires
    // harmlessly while nothing waits (the consumer is busy); the next wait re-arms it.
    this.timer = setTimeout(() => {
      if (this.waiting) this.end(this.timeoutError())
    }, idleMs)
    // One listener for the response, not one per wait.
    this.stop.onStop(() => this.rejectWait?.(this.stop.reason))
    if (caller?.aborted) this.onCallerAbort()
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true })
  }

  /** Aborted when the server was silent too long or the caller aborted, with the same reason as `stop`. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.stop.stopped) this.controller.abort(this.stop.reason)
    }
    return this.controller.signal
  }

  /** True once the silence limit, not the caller, ended the response. */
  get timedOut(): boolean {
    const { reason } = this.stop
    return reason instanceof LlmError && reason.code === 'TIMEOUT'
  }

  /**
   * `pending`, unless the server stays silent for `idleMs` first or the caller aborts (then rejects
   * with why). One promise per wait, settled by `pending` or by the stop: not a `Promise.race`
   * against a promise of the stop, which would keep a reaction on it per read until the response ends.
   */
  async wait<T>(pending: Promise<T>): Promise<T> {
    if (this.stop.stopped) {
      // Nobody waits on it now: its own failure must not become an unhandled rejection.
      pending.catch(() => {})
      throw this.stop.reason
    }
    this.waiting = true
    this.timer.refresh()
    try {
      return await new Promise<T>((resolve, reject) => {
        this.rejectWait = reject
        pending.then(resolve, reject)
      })
    } finally {
      this.waiting = false
      this.rejectWait = undefined
    }
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.caller?.removeEventListener('abort', this.onCallerAbort)
  }

  private end(reason: unknown): void {
    this.stop.stop(reason)
    this.controller?.abort(reason)
  }

  private timeoutError(): LlmError {
    const what = this.phase === 'headers' ? 'sent no response' : 'sent nothing'
    // The setting is named: a slow local model may need more than the default.
    return new LlmError({ code: 'TIMEOUT', message: `${this.label} ${what} for ${this.idleMs} ms (streamIdleTimeoutMs)` })
  }
}
