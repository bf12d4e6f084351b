/**
 * SSE framing over a fetch body with `eventsource-parser`, plus the idle watchdog: a stream that
 * sends no bytes at all (not even a keep-alive comment) for `idleTimeoutMs` ends with `TIMEOUT`.
 */

import { LlmError } from '@rein/llm'
import { createParser, type ParseError } from 'eventsource-parser'

export interface SseOptions {
  /** Names the server in messages. */
  provider: string
  idleTimeoutMs: number
  /** Largest event accepted, in characters; a longer one is garbage, not a stream. */
  maxEventChars?: number
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
  // One watchdog for the whole stream, pushed back on every read: no timer churn per chunk.
  let fire!: (error: LlmError) => void
  const idle = new Promise<never>((_, reject) => { fire = reject })
  idle.catch(() => {})
  const timer = setTimeout(() => fire(new LlmError({ code: 'TIMEOUT', message: `${options.provider} sent nothing for ${options.idleTimeoutMs} ms` })), options.idleTimeoutMs)
  try {
    while (true) {
      const { done, value } = await read(reader, idle, options.provider)
      timer.refresh()
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
    clearTimeout(timer)
    reader.cancel().catch(() => {})
  }
}

async function read(reader: ReadableStreamDefaultReader<Uint8Array>, idle: Promise<never>, provider: string) {
  try {
    return await Promise.race([reader.read(), idle])
  } catch (error) {
    if (error instanceof LlmError) throw error
    // The connection broke after the response started (socket reset, server gone).
    throw new LlmError({ code: 'STREAM_CLOSED', message: `${provider} closed the connection mid-stream (${(error as Error).message})` }, { cause: error })
  }
}
