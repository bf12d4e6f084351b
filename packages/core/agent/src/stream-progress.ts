/**
 * Marks of how much an answer has streamed, left in the log while it streams (`llm/progress`): the
 * provider bills what it streamed, and a kill -9 mid-answer leaves only the request's mark, so
 * repair counts the cut-off attempt's output from the last of these. Written without waiting for
 * the disk (kept across a killed process), one per `PROGRESS_EVERY_CHARS`: a short answer writes none.
 */

import type { StreamChunk } from '@rein/llm'
import type { Session } from '@rein/session'

/** Characters streamed between two marks: about 1,000 tokens, the most a kill leaves uncounted. */
const PROGRESS_EVERY_CHARS = 4_000

/**
 * Counts what one request's attempt streams, and marks the log each time another
 * `PROGRESS_EVERY_CHARS` have streamed since the last mark. On a store without `write`, a mark's
 * write is a flush (an fsync); it is never awaited.
 */
export class StreamProgress {
  private chars = 0
  private next = PROGRESS_EVERY_CHARS

  constructor(private readonly session: Session) {}

  /** A new attempt: what the last one streamed is its own record's to count. */
  restart(): void {
    this.chars = 0
    this.next = PROGRESS_EVERY_CHARS
  }

  add(chunk: StreamChunk): void {
    const added = chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' ? chunk.text.length : chunk.type === 'tool-call-delta' ? chunk.argumentsDelta.length : 0
    if (added === 0) return
    this.chars += added
    if (this.chars < this.next) return
    this.next = this.chars + PROGRESS_EVERY_CHARS
    this.session.append('llm/progress', { outputChars: this.chars })
    // A mark that could not be written leaves the output uncounted, as before marks: nothing to stop for.
    this.session.write().catch(() => {})
  }
}
