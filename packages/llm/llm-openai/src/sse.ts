/**
 * SSE framing over a response body with `eventsource-parser`, under the response's watchdog: a server
 * that sends no bytes at all (not even a keep-alive comment) for the idle limit while we wait ends
 * with `TIMEOUT`.
 */

import { cutHead } from '@rein/base'
import { LlmError } from '@rein/llm'
import { createParser, type EventSourceParser } from 'eventsource-parser'
import { redact } from './credentials.ts'
import { failureFromUnframedBody, serverError } from './errors.ts'
import { ResponseWatchdog } from './watchdog.ts'
import { STOP_READING } from './response-body.ts'
import type { ChunkRead, ChunkReader } from './transport.ts'

/** How `readSseData` reads a body: whose it is, and how long it may stay silent. */
export interface SseOptions {
  /** Names the server in messages. */
  provider: string
  /** The longest the body may send no bytes at all before `TIMEOUT`; unused when `watchdog` is given. */
  idleTimeoutMs: number
  /** Largest event accepted, in characters; a longer one is garbage, not a stream. */
  maxEventChars?: number
  /** The response's watchdog; without one, the stream gets its own with `idleTimeoutMs`. */
  watchdog?: ResponseWatchdog
  /** Credentials the request sent, cut out of any body text a failure quotes (so is text shaped like a common key: `sk-…`, `Bearer …`). */
  secrets?: readonly string[]
}

const MAX_EVENT_CHARS = 8 * 1024 * 1024
/** Of the lines that are no SSE field, this many characters are kept: enough to read an error object. */
const MAX_UNFRAMED_CHARS = 4096

/** Yields each event's `data`, in order; throws `LlmError` on idle timeout, a broken connection, garbage or a body that is no SSE. */
export async function* readSseData(body: ReadableStream<Uint8Array>, options: SseOptions): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader()
  const framer = new SseFramer(options.provider, options.maxEventChars)
  const watchdog = options.watchdog ?? new ResponseWatchdog(options.provider, options.idleTimeoutMs)
  watchdog.phase = 'body'
  try {
    while (true) {
      const { done, value } = await readBody(reader, watchdog, options.provider)
      for (const data of done ? framer.end() : framer.push(value)) yield data
      if (!done) continue
      framer.throwIfCut()
      return framer.throwIfUnframed(options.secrets)
    }
  } finally {
    if (!options.watchdog) watchdog.dispose()
    reader.cancel(STOP_READING).catch(() => {})
  }
}

const NO_EVENTS: readonly string[] = []

/**
 * SSE framing of a body, fed read by read: the `data` of the events each read completed. It does
 * not read, so a loop that awaits the body itself pays no generator hop per read.
 */
export class SseFramer {
  private readonly queue: string[] = []
  private readonly decoder = new TextDecoder()
  private readonly parser: EventSourceParser
  // Only an oversized event ends the stream; the parser's other complaints (an unknown field, a bad
  // retry) are lines it skips. Once oversized, the parser is terminated and throws a plain Error on
  // the next feed: every feed is checked, the last ones too.
  private oversized = false
  /** Whether the bytes so far end at a line break (a body that stops elsewhere was cut mid-line). */
  private lineEnded = true
  private cut = false
  private sawEvent = false
  /**
   * The lines the parser could not read as SSE, joined, while no event has come: a body of those
   * alone is what a server sent in place of a stream (a bare JSON error), to be quoted, not dropped.
   */
  private unframedText = ''

  /** `provider` names the server in messages; an event longer than `maxEventChars` is garbage. */
  constructor(private readonly provider: string, private readonly maxEventChars = MAX_EVENT_CHARS) {
    this.parser = createParser({
      onEvent: (event) => {
        this.sawEvent = true
        this.queue.push(event.data)
      },
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') this.oversized = true
        else if (error.type === 'unknown-field' && !this.sawEvent && error.line !== undefined) this.keepUnframed(error.line)
      },
      maxBufferSize: maxEventChars,
    })
  }

  /** The events `bytes` completed, maybe none. Throws `MALFORMED_RESPONSE` for an oversized event. */
  push(bytes: Uint8Array): readonly string[] {
    this.feedEnding(this.decoder.decode(bytes, { stream: true }))
    return this.queue.length > 0 ? this.queue.splice(0) : NO_EVENTS
  }

  /**
   * At the body's end: the events still held, the last one read even without its closing blank
   * line. One a body cut inside a line left torn is not returned: `throwIfCut` then throws.
   */
  end(): string[] {
    this.feedEnding(this.decoder.decode())
    this.feed('\n\n')
    const events = this.queue.splice(0)
    const last = events.at(-1)
    // A body that stopped inside a line cut its last event short: unless what arrived still reads
    // whole, the connection broke mid-event, which is not the server sending garbage.
    if (!this.lineEnded && last !== undefined && !readsWhole(last)) {
      this.cut = true
      events.pop()
    }
    return events
  }

  /** After `end`: throws `STREAM_CLOSED` when the body stopped in the middle of an event. */
  throwIfCut(): void {
    if (this.cut) throw new LlmError({ code: 'STREAM_CLOSED', message: `${this.provider} closed the stream in the middle of an event` })
  }

  /**
   * After `end`: throws when the body held no event at all, only lines that are no SSE field (see
   * `failureFromUnframedBody`), quoting them without `secrets`. Comments and blank lines alone pass.
   */
  throwIfUnframed(secrets: readonly string[] = []): void {
    // What the server sent in place of a stream says more than an empty stream would, and a
    // balance error so read is not retried.
    if (this.sawEvent || this.unframedText === '') return
    throw serverError(failureFromUnframedBody(this.provider, redact(this.unframedText, secrets)))
  }

  private keepUnframed(line: string) {
    const room = MAX_UNFRAMED_CHARS - this.unframedText.length
    if (room > 0) this.unframedText += cutHead(this.unframedText === '' ? line : `\n${line}`, room)
  }

  /** Feeds the body's own text, noting whether it ends at a line break. */
  private feedEnding(text: string) {
    this.feed(text)
    if (text !== '') this.lineEnded = /[\r\n]$/.test(text)
  }

  private feed(text: string) {
    this.parser.feed(text)
    if (this.oversized) throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${this.provider} sent an event larger than ${this.maxEventChars} characters` })
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

/** The body's next read, under the watchdog: a broken connection is `STREAM_CLOSED`, an abort its reason. */
export async function readBody(reader: ChunkReader, watchdog: ResponseWatchdog, provider: string): Promise<ChunkRead> {
  try {
    const result = await watchdog.wait(reader.read())
    // An abort cancels the body, which can look like a clean end: say why it really ended.
    if (result.done && watchdog.stop.stopped) throw watchdog.stop.reason
    return result
  } catch (error) {
    if (watchdog.stop.stopped) throw watchdog.stop.reason
    // The connection broke after the response started (socket reset, server gone).
    throw new LlmError({ code: 'STREAM_CLOSED', message: `${provider} closed the connection mid-stream (${(error as Error).message})` }, { cause: error })
  }
}
