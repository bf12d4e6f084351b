/** Every body rein stops reading is cancelled with a shared reason: none gets a fresh DOMException (issue #8 §1.8). */

import { describe, expect, it } from 'vitest'
import { readSseData } from '../src/index.ts'

function body(text: string) {
  const reasons: unknown[] = []
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text))
    },
    cancel(reason) {
      reasons.push(reason)
    },
  })
  return { stream, reasons }
}

describe('stopping a response body', () => {
  it('cancels an event stream read to [DONE] with a shared reason, never undefined', async () => {
    const first = body('data: {"a":1}\n\ndata: [DONE]\n\n')
    const second = body('data: {"a":2}\n\ndata: [DONE]\n\n')
    for (const { stream } of [first, second]) {
      for await (const data of readSseData(stream, { provider: 'p', idleTimeoutMs: 1_000 })) {
        if (data === '[DONE]') break
      }
    }
    expect(first.reasons).toHaveLength(1)
    expect(first.reasons[0]).toBeInstanceOf(Error)
    expect(second.reasons[0]).toBe(first.reasons[0])
  })
})
