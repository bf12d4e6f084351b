/**
 * `ResponseWatchdog`: how long a server may stay silent while we wait on it — for the status line
 * and headers, or for any body read, error bodies included. Only time spent waiting on the server
 * counts: a consumer busy with a chunk (awaiting, or blocking the event loop) never trips it.
 */

import { LlmError } from '@rein/llm'

/** One response's silence limit and abort signal; `wait` every promise that waits on the server. */
export class ResponseWatchdog {
  private readonly controller = new AbortController()
  private readonly timer: NodeJS.Timeout
  private readonly stopped: Promise<never>
  private waiting = false
  private readonly onCallerAbort = () => this.controller.abort(this.caller?.reason)
  /** What the response is at, for the timeout message. */
  phase: 'headers' | 'body' = 'headers'

  /** `label` names the server in messages; `caller` is the request's own signal. */
  constructor(private readonly label: string, readonly idleMs: number, private readonly caller?: AbortSignal) {
    // One timer per response, re-armed as each wait starts: no timer churn per chunk. It fires
    // harmlessly while nothing waits (the consumer is busy); the next wait re-arms it.
    this.timer = setTimeout(() => {
      if (this.waiting) this.controller.abort(this.timeoutError())
    }, idleMs)
    this.stopped = new Promise<never>((_, reject) => {
      this.controller.signal.addEventListener('abort', () => reject(this.controller.signal.reason), { once: true })
    })
    this.stopped.catch(() => {})
    if (caller?.aborted) this.onCallerAbort()
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true })
  }

  /** Aborted when the server was silent too long or the caller aborted: the request is torn down with it. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** True once the silence limit, not the caller, ended the response. */
  get timedOut(): boolean {
    return this.controller.signal.aborted && this.controller.signal.reason instanceof LlmError && this.controller.signal.reason.code === 'TIMEOUT'
  }

  /** `pending`, unless the server stays silent for `idleMs` first or the caller aborts (then rejects with why). */
  async wait<T>(pending: Promise<T>): Promise<T> {
    this.waiting = true
    this.timer.refresh()
    try {
      return await Promise.race([pending, this.stopped])
    } finally {
      this.waiting = false
    }
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.caller?.removeEventListener('abort', this.onCallerAbort)
  }

  private timeoutError(): LlmError {
    const what = this.phase === 'headers' ? 'sent no response' : 'sent nothing'
    return new LlmError({ code: 'TIMEOUT', message: `${this.label} ${what} for ${this.idleMs} ms` })
  }
}
