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
  try {
    while (true) {
      const { done, value } = await readWithin(reader, options)
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
      yield* queue.splice(0)
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, options: SseOptions) {
  let timer: NodeJS.Timeout | undefined
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new LlmError({ code: 'TIMEOUT', message: `${options.provider} sent nothing for ${options.idleTimeoutMs} ms` }))
    }, options.idleTimeoutMs)
  })
  try {
    return await Promise.race([reader.read(), idle])
  } catch (error) {
    if (error instanceof LlmError) throw error
    // The connection broke after the response started (socket reset, server gone).
    throw new LlmError({ code: 'STREAM_CLOSED', message: `${options.provider} closed the connection mid-stream (${(error as Error).message})` }, { cause: error })
  } finally {
    clearTimeout(timer)
  }
}
