/**
 * A response's events as chunks, fed read by read: SSE framing, JSON, then the chunk translator.
 * It holds the chunks of the read being translated, so a failure that cuts a read still shows
 * what came before it.
 */

import { LlmError, type StreamChunk } from '@rein/llm'
import { createChunkTranslator, type ChunkTranslator } from './convert-stream.ts'
import { redact } from './credentials.ts'
import type { OpenAiDialect } from './dialect.ts'
import { SseFramer } from './sse.ts'
import { cutHead } from '@rein/base'

/** One response's events as chunks; `push` each read's bytes, then `end` or, once `over`, `finish`. */
export class EventReading {
  private readonly framer: SseFramer
  private readonly translator: ChunkTranslator
  /** The chunks of the read being translated: returned whole, or by `salvage` after a failure. */
  private out: StreamChunk[] = []
  private done = false

  /** `label` names the server in messages; `secrets` are cut out of any event quoted in one. */
  constructor(private readonly label: string, private readonly secrets: readonly string[], dialect: OpenAiDialect) {
    this.framer = new SseFramer(label)
    this.translator = createChunkTranslator(label, dialect.replayState !== undefined ? { replayState: dialect.replayState } : {})
  }

  /** The model said how its answer ended (`finish_reason`): nothing the body still holds changes it. */
  get finished(): boolean {
    return this.translator.finished()
  }

  /**
   * Nothing more is coming that the answer needs: `[DONE]`, or the closing usage chunk after the
   * model finished (a server that then never says `[DONE]` nor closes would otherwise hold the
   * answer for the whole silence limit).
   */
  get over(): boolean {
    return this.done || this.translator.complete()
  }

  /** The chunks of one read's events. Once `over`, none: the read's chunks wait to join `finish`'s. */
  push(bytes: Uint8Array): StreamChunk[] {
    this.translate(this.framer.push(bytes))
    return this.over ? [] : this.take()
  }

  /**
   * The body ended: its last events and the answer's end. Throws when it stopped mid-event or
   * mid-answer, or held no event at all but other text (see `failureFromUnframedBody`).
   */
  end(): StreamChunk[] {
    this.translate(this.framer.end())
    if (!this.done) this.framer.throwIfCut()
    // Before "closed before the model finished": what the server sent in place of a stream says more.
    this.framer.throwIfUnframed(this.secrets)
    return this.finish()
  }

  /** The answer's closing chunks (block ends, usage, finish) after those of the read before them. */
  finish(): StreamChunk[] {
    this.out.push(...this.translator.end(this.done))
    return this.take()
  }

  /**
   * After a failure: the chunks of the read it cut, usage the server reported in it included (the
   * usage of earlier reads went out with them).
   */
  salvage(): StreamChunk[] {
    return this.take()
  }

  private translate(events: readonly string[]) {
    for (const data of events) {
      if (this.done) return
      const trimmed = data.trim()
      // An empty `data:` (a heartbeat some servers send) carries nothing: not a malformed event.
      if (trimmed === '') continue
      if (trimmed === '[DONE]') {
        this.done = true
        return
      }
      let payload: unknown
      try {
        payload = JSON.parse(data)
      } catch {
        throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${this.label} sent a stream event that is not JSON: ${cutHead(redact(data, this.secrets), 120)}` })
      }
      this.out.push(...this.translator.push(payload))
    }
  }

  private take(): StreamChunk[] {
    const out = this.out
    this.out = []
    return out
  }
}
