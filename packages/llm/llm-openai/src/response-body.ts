/** Reading a non-stream body (an error body) without trusting the server: bounded and under the watchdog. */

import type { ChunkReader } from './transport.ts'
import type { ResponseWatchdog } from './watchdog.ts'

/**
 * The reason every body rein stops reading is cancelled with. One shared instance: a web stream
 * cancelled with no reason builds a DOMException (with a stack) each time.
 */
export const STOP_READING = new Error('rein stopped reading the response')

export interface BoundedBody {
  text: string
  bytes: number
  /** Why the body ended early: the server went silent, or the connection broke. */
  cut?: 'stalled' | 'broken'
}

/**
 * At most `maxBytes` of `body`, each read under `watchdog`; whatever is left is cancelled, never
 * read, so a huge body costs no memory and the connection is dropped. A stall or a broken
 * connection returns what arrived; the caller's abort is thrown.
 */
export async function readBounded(reader: ChunkReader, watchdog: ResponseWatchdog, maxBytes: number, caller: AbortSignal): Promise<BoundedBody> {
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  try {
    while (bytes < maxBytes) {
      const { done, value } = await watchdog.wait(reader.read())
      if (done) break
      const room = maxBytes - bytes
      const part = value.byteLength > room ? value.subarray(0, room) : value
      bytes += part.byteLength
      text += decoder.decode(part, { stream: true })
    }
    if (watchdog.timedOut) return { text: text + decoder.decode(), bytes, cut: 'stalled' }
    return { text: text + decoder.decode(), bytes }
  } catch (error) {
    if (caller.aborted) throw error
    return { text: text + decoder.decode(), bytes, cut: watchdog.timedOut ? 'stalled' : 'broken' }
  } finally {
    reader.cancel(STOP_READING).catch(() => {})
  }
}
