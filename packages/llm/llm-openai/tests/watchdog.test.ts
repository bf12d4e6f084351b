/** `ResponseWatchdog` keeps its public `signal` (made only when asked for) in step with its stop. */

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { LlmError } from '@rein/llm'
import { describe, expect, it } from 'vitest'
import { ResponseWatchdog } from '../src/index.ts'

const never = new Promise<never>(() => {})

describe('ResponseWatchdog', () => {
  it("aborts a signal asked for before the caller's abort, with the caller's reason", async () => {
    const caller = new AbortController()
    const watchdog = new ResponseWatchdog('server', 60_000, caller.signal)
    const { signal } = watchdog
    const waiting = watchdog.wait(never)
    const reason = new Error('the user stopped it')
    caller.abort(reason)
    await expect(waiting).rejects.toBe(reason)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(reason)
    expect(watchdog.timedOut).toBe(false)
    watchdog.dispose()
  })

  it('gives a signal asked for after the silence limit already aborted with the timeout', async () => {
    const watchdog = new ResponseWatchdog('server', 5)
    const failure = await watchdog.wait(never).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(LlmError)
    expect((failure as LlmError).code).toBe('TIMEOUT')
    expect(watchdog.timedOut).toBe(true)
    expect(watchdog.signal.aborted).toBe(true)
    expect(watchdog.signal.reason).toBe(failure)
    watchdog.dispose()
  })

  it('starts stopped when the caller had already aborted, and then waits on nothing', async () => {
    const caller = new AbortController()
    caller.abort(new Error('too late'))
    const watchdog = new ResponseWatchdog('server', 60_000, caller.signal)
    expect(watchdog.stop.stopped).toBe(true)
    await expect(watchdog.wait(Promise.resolve('answer'))).rejects.toBe(caller.signal.reason)
    // What it was given fails later, with nobody waiting on it: no unhandled rejection.
    let fail!: (error: Error) => void
    const failing = new Promise<never>((_, reject) => { fail = reject })
    await expect(watchdog.wait(failing)).rejects.toBe(caller.signal.reason)
    fail(new Error('the request failed after the abort'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(watchdog.signal.reason).toBe(caller.signal.reason)
    watchdog.dispose()
  })

  it('keeps no memory per read while a response lasts (a Promise.race against one stop promise kept a reaction per read)', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const watchdog = new ResponseWatchdog('server', 60_000)
    const reads = async (count: number) => {
      for (let i = 0; i < count; i++) await watchdog.wait(Promise.resolve(i))
    }
    await reads(1_000)
    gc()
    const before = process.memoryUsage().heapUsed
    await reads(50_000)
    gc()
    const kept = process.memoryUsage().heapUsed - before
    watchdog.dispose()
    // 50 000 reads kept about 15 MB before; a few MB of slack for whatever else the process does.
    expect(kept).toBeLessThan(4 * 1024 * 1024)
  })
})
