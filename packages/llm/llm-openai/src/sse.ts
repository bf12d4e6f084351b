/**
 * SSE framing over a fetch body with `eventsource-parser`, under the response's watchdog: a server
 * that sends no bytes at all (not even a keep-alive comment) for the idle limit while we wait ends
 * with `TIMEOUT`.
 */

import { LlmError } from '@rein/llm'
import { createParser, type ParseError } from 'eventsource-parser'
import { ResponseWatchdog } from './watchdog.ts'
import { STOP_READING } from './response-body.ts'

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
  const queue: string[] = []
  let parseError: ParseError | undefined
  const parser = createParser({
    onEvent: (event) => queue.push(event.data),
    onError: (error) => { parseError ??= error },
    maxBufferSize: options.maxEventChars ?? MAX_EVENT_CHARS,
  })
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const watchdog = options.watchdog ?? new ResponseWatchdog(options.provider, options.idleTimeoutMs)
  watchdog.phase = 'body'
  try {
    while (true) {
      const { done, value } = await read(reader, watchdog, options.provider)
      if (done) {
        parser.feed(decoder.decode())
        parser.feed('\n\n')
        yield* queue.splice(0)
        return
      }
      parser.feed(decoder.decode(value, { stream: true }))
      if (parseError?.type === 'max-buffer-size-exceeded') {
        throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${options.provider} sent an event larger than ${options.maxEventChars ?? MAX_EVENT_CHARS} characters` })
      }
      if (queue.length > 0) yield* queue.splice(0)
    }
  } finally {
    if (!options.watchdog) watchdog.dispose()
    reader.cancel(STOP_READING).catch(() => {})
  }
}

async function read(reader: ReadableStreamDefaultReader<Uint8Array>, watchdog: ResponseWatchdog, provider: string) {
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
