/**
 * On Node 20 every AbortSignal outlives the young-generation collections and costs microseconds to
 * make, so a request makes one per attempt, the one the adapter is handed; neither the runtime nor
 * this adapter makes one of its own (docs/architecture.md, Conventions).
 */

import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

/** Counts the AbortControllers whose signal is made while `run` runs. */
async function signalsMadeBy(run: () => Promise<unknown>): Promise<number> {
  const original = Object.getOwnPropertyDescriptor(AbortController.prototype, 'signal')
  if (original?.get === undefined) throw new Error('AbortController.prototype.signal is not a getter on this Node')
  const made = new WeakSet<AbortController>()
  let count = 0
  Object.defineProperty(AbortController.prototype, 'signal', {
    configurable: true,
    get(this: AbortController) {
      if (!made.has(this)) {
        made.add(this)
        count++
      }
      return original.get?.call(this) as AbortSignal
    },
  })
  try {
    await run()
  } finally {
    Object.defineProperty(AbortController.prototype, 'signal', original)
  }
  return count
}

describe('the AbortSignals a request makes', () => {
  it("is one per attempt, with a caller's signal and a retry after a server error", async () => {
    const { root, server } = await boot([{ kind: 'error', status: 503, message: 'overloaded' }, { steps: [{ text: 'ok' }] }])
    const caller = new AbortController().signal
    const made = await signalsMadeBy(async () => {
      const { finish } = await run(root, { signal: caller })
      expect(finish.reason).toBe('stop')
    })
    expect(server.requests).toHaveLength(2)
    expect(made).toBe(2)
  })
})
