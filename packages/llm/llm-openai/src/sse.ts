/**
 * SSE framing over a response body with `eventsource-parser`, under the response's watchdog: a server
 * that sends no bytes at all (not even a keep-alive comment) for the idle limit while we wait ends
 * with `TIMEOUT`.
 */

import { LlmError } from '@rein/llm'
import { createParser } from 'eventsource-parser'
import { ResponseWatchdog } from './watchdog.ts'
import { STOP_READING } from './response-body.ts'
import type { ChunkReader } from './transport.ts'

export interface SseOptions {
  /** Names the server in messages. */
  provider: string
  idleTimeoutMs: number
  /** Largest event accepted, in characters; a longer one is garbage, not a stream. */
  maxEventChars?: number
  /** The response's watchdog; without one, the stream gets its own with `idleTimeoutMs`. */
  watchdog?: ResponseWatchdog
}

const MAX_EVENT_CHARS = 8 * 1024 * 1024

/** Yields each event's `data`, in order. Throws `LlmError` on idle timeout, a broken connection or garbage. */
export async function* readSseData(body: ReadableStream<Uint8Array>, options: SseOptions): AsyncGenerator<string, void, undefined> {
  for await (const batch of readSseBatches(body.getReader(), options)) for (const data of batch) yield data
}

/**
 * `readSseData` a read at a time: the `data` of the events each read of the body completed, in
 * order, one array per read (never empty). A reader loops over the array itself, so a read that
 * brings many events costs one hop through the generators, not one per event.
 */
export async function* readSseBatches(reader: ChunkReader, options: SseOptions): AsyncGenerator<string[], void, undefined> {
  const queue: string[] = []
  const maxEventChars = options.maxEventChars ?? MAX_EVENT_CHARS
  // Only an oversized event ends the stream; the parser's other complaints (an unknown field, a bad
  // retry) are lines it skips. Once oversized, the parser is terminated and throws a plain Error on
  // the next feed: every feed is checked, the last ones too.
  let oversized = false
  const parser = createParser({
    onEvent: (event) => queue.push(event.data),
    onError: (error) => { if (error.type === 'max-buffer-size-exceeded') oversized = true },
    maxBufferSize: maxEventChars,
  })
  const feed = (text: string) => {
    parser.feed(text)
    if (oversized) throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${options.provider} sent an event larger than ${maxEventChars} characters` })
  }
  const decoder = new TextDecoder()
  /** Whether the bytes so far end at a line break (a body that stops elsewhere was cut mid-line). */
  let lineEnded = true
  const watchdog = options.watchdog ?? new ResponseWatchdog(options.provider, options.idleTimeoutMs)
  watchdog.phase = 'body'
  try {
    while (true) {
      const { done, value } = await read(reader, watchdog, options.provider)
      if (done) {
        const tail = decoder.decode()
        feed(tail)
        if (tail) lineEnded = /[\r\n]$/.test(tail)
        // The last event is read even without its closing blank line. But a body that stopped
        // inside a line cut that event short: unless what arrived still reads whole, the
        // connection broke mid-event, which is not the server sending garbage.
        feed('\n\n')
        const events = queue.splice(0)
        const last = events.at(-1)
        if (!lineEnded && last !== undefined && !readsWhole(last)) {
          if (events.length > 1) yield events.slice(0, -1)
          throw new LlmError({ code: 'STREAM_CLOSED', message: `${options.provider} closed the stream in the middle of an event` })
        }
        if (events.length > 0) yield events
        return
      }
      const text = decoder.decode(value, { stream: true })
      feed(text)
      if (text) lineEnded = /[\r\n]$/.test(text)
      if (queue.length > 0) yield queue.splice(0)
    }
  } finally {
    if (!options.watchdog) watchdog.dispose()
    reader.cancel(STOP_READING).catch(() => {})
  }
}

/** `[DONE]` or complete JSON: an event cut where it happens to be whole is still the server's. */
function readsWhole(data: string): boolean {
  if (data.trim() === '[DONE]') return true
  try {
    JSON.parse(data)
    return true
  } catch {
    return false
  }
}

async function read(reader: ChunkReader, watchdog: ResponseWatchdog, provider: string) {
  try {
    const result = await watchdog.wait(reader.read())
    // An abort cancels the body, which can look like a clean end: say why it really ended.
    if (result.done && watchdog.signal.aborted) throw watchdog.signal.reason
    return result
  } catch (error) {
    if (watchdog.signal.aborted) throw watchdog.signal.reason
    // The connection broke after the response started (socket reset, server gone).
    throw new LlmError({ code: 'STREAM_CLOSED', message: `${provider} closed the connection mid-stream (${(error as Error).message})` }, { cause: error })
  }
}
