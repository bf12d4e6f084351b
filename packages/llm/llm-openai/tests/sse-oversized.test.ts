// Found by the soak fuzzer (soak/corpus/sse): an oversized event that follows any line the SSE
// parser complains about (an unknown field) escaped as a plain Error, which reads as a transport failure.
import { isReinError } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { readSseData } from '../src/index.ts'

function body(...pieces: (string | Uint8Array)[]) {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(typeof piece === 'string' ? new TextEncoder().encode(piece) : piece)
      controller.close()
    },
  })
}

async function drain(stream: ReadableStream<Uint8Array>) {
  const events: string[] = []
  for await (const data of readSseData(stream, { provider: 'P', idleTimeoutMs: 1_000, maxEventChars: 64 })) events.push(data)
  return events
}

describe('an event larger than the limit', () => {
  it('fails as MALFORMED_RESPONSE even after a line with an unknown field, not as a plain Error', async () => {
    const error = await drain(body('y\n', `data: ${'z'.repeat(50)}`, 'z'.repeat(50), 'z'.repeat(50), '\n\n')).catch((caught: unknown) => caught)
    expect(isReinError(error) ? error.code : error).toBe('MALFORMED_RESPONSE')
  })

  it('fails as MALFORMED_RESPONSE when it only grows past the limit as the body ends (a cut UTF-8 sequence)', async () => {
    // 64 characters buffered, then half a character: the decoder's final flush adds U+FFFD, one too many.
    const error = await drain(body(`data: ${'z'.repeat(58)}`, Uint8Array.of(0xe2))).catch((caught: unknown) => caught)
    expect(isReinError(error) ? error.code : error).toBe('MALFORMED_RESPONSE')
  })

  it('still passes events within the limit after an unknown field', async () => {
    expect(await drain(body('y\n', 'data: {"a":1}\n\n'))).toEqual(['{"a":1}'])
  })
})
