/**
 * Runs grep's regular expression in a worker thread. JavaScript's engine backtracks, and a pattern
 * such as `(a+)+$` can take longer than the universe on a short line; run on the main thread it
 * would block the process, and no deadline or cancel could stop it. In a worker it is ended —
 * terminated — when the call is cancelled or one block of a file takes longer than the timeout.
 * The worker's code is an inline script (no second entry file), so it runs the same from source
 * under tsx and from the bundled build.
 */

import { Worker } from 'node:worker_threads'
import { fsError } from './errors.ts'

/** A matching line of a block: its index in the block, and where the first match starts in it. */
export type Hit = readonly [line: number, index: number]

export interface MatcherOptions {
  /** Longest one block may take; past it the search ends with `GREP_TIMEOUT`. */
  timeoutMs: number
  /** Ends the worker when aborted. */
  signal?: AbortSignal
}

interface Pending {
  /** The file the block is from, as the model knows it, for the timeout's message. */
  file: string
  resolve: (hits: Hit[]) => void
  reject: (error: Error) => void
}

type Reply = { hits: Hit[] } | { error: string }

// Plain CommonJS, run as is: nothing here is compiled. `workerData`: {source, flags} of the regex.
// A block is whole lines; a test over the whole of it (with ^ and $ per line) skips most blocks at
// once, unless the pattern has a look-around, which could see across a line break there.
const WORKER_SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads')
const regex = new RegExp(workerData.source, workerData.flags)
const probe = /\\(\\?<?[=!]/.test(workerData.source) ? undefined : new RegExp(workerData.source, workerData.flags + 'm')
parentPort.on('message', ({ block, limit }) => {
  try {
    const hits = []
    if (probe === undefined || probe.test(block.includes('\\r') ? block.replace(/\\r$/gm, '') : block)) {
      const lines = block.split('\\n')
      for (let i = 0; i < lines.length && hits.length < limit; i++) {
        const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i]
        const found = regex.exec(line)
        if (found !== null) hits.push([i, found.index])
      }
    }
    parentPort.postMessage({ hits })
  } catch (error) {
    parentPort.postMessage({ error: String(error) })
  }
})
`

/** One grep call's worker: blocks go in, matching lines come out, in order. Close it when done. */
export class Matcher {
  private readonly worker: Worker
  /** Blocks sent and not yet answered; the worker answers them in this order. */
  private readonly queue: Pending[] = []
  private timer: NodeJS.Timeout | undefined
  private closed = false
  private stopped: Error | undefined
  /** The thread is running: until then no block is timed, as its start (slow on a busy machine) is not the pattern's time. */
  private online = false

  constructor(regex: RegExp, private readonly options: MatcherOptions) {
    // No execArgv: the script needs no loader (tsx would only slow the start).
    this.worker = new Worker(WORKER_SCRIPT, { eval: true, workerData: { source: regex.source, flags: regex.flags }, execArgv: [] })
    this.worker.on('online', () => {
      this.online = true
      this.watch()
    })
    this.worker.on('message', (reply: Reply) => this.answer(reply))
    this.worker.on('error', (error) => this.fail(fsError('READ_FAILED', `grep could not run the pattern: ${error.message}`, {}, error)))
    this.worker.on('exit', (code) => {
      if (!this.closed) this.fail(fsError('READ_FAILED', `grep could not run the pattern: its thread ended (exit code ${code})`))
    })
    options.signal?.addEventListener('abort', this.onAbort, { once: true })
    if (options.signal?.aborted) this.onAbort()
  }

  /** Why the matcher stopped (a timeout, a cancel, a dead thread); every later `match` rejects with it. */
  get failure(): Error | undefined {
    return this.stopped
  }

  /** The lines of `block` (split on `\n`, a trailing `\r` ignored) that match, at most `limit`. */
  match(block: string, limit: number, file: string): Promise<Hit[]> {
    if (this.stopped) return Promise.reject(this.stopped)
    return new Promise<Hit[]>((resolve, reject) => {
      this.queue.push({ file, resolve, reject })
      this.worker.postMessage({ block, limit })
      if (this.queue.length === 1) this.watch()
    })
  }

  /** Ends the worker; pending blocks reject. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.options.signal?.removeEventListener('abort', this.onAbort)
    clearTimeout(this.timer)
    this.stopped ??= new Error('the matcher is closed')
    this.rejectAll(this.stopped)
    await this.worker.terminate()
  }

  private readonly onAbort = () => {
    const reason: unknown = this.options.signal?.reason
    this.fail(reason instanceof Error ? reason : new Error(String(reason)))
  }

  private answer(reply: Reply) {
    const head = this.queue.shift()
    clearTimeout(this.timer)
    if (this.queue.length > 0) this.watch()
    if (head === undefined) return
    if ('hits' in reply) head.resolve(reply.hits)
    else head.reject(new Error(reply.error))
  }

  /** Times the block at the head of the queue: the one the worker is on. */
  private watch() {
    const head = this.queue[0]
    if (head === undefined || !this.online || this.stopped) return
    const { timeoutMs } = this.options
    this.timer = setTimeout(() => this.fail(fsError(
      'GREP_TIMEOUT',
      `grep stopped: the pattern ran for more than ${timeoutMs} ms on one part of ${head.file}, which usually means it backtracks catastrophically (nested quantifiers such as (a+)+, or alternatives that overlap such as (a|a)*); write it without them, or narrow path or glob`,
      { file: head.file, timeoutMs },
    )), timeoutMs)
  }

  private fail(error: Error) {
    if (this.stopped) return
    this.stopped = error
    clearTimeout(this.timer)
    this.rejectAll(error)
    // Terminating is what stops a runaway match; `close` still awaits it.
    void this.worker.terminate()
  }

  private rejectAll(failure: Error) {
    for (const pending of this.queue.splice(0)) pending.reject(failure)
  }
}
