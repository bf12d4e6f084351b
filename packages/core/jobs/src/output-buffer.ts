/**
 * A job's unread output, bounded in characters and in lines: when it outgrows either limit the
 * oldest unread text goes (whole lines, for the line limit), and is counted.
 */

import { countNewlines } from '@rein/base'

export class OutputBuffer {
  private _chunks: string[] = []
  private _chars = 0
  /** Newlines in the unread text. */
  private _newlines = 0
  private _dropped = 0

  /** `lines` is counted as the agent's spill counts them: a final newline ends a line, it starts none. */
  constructor(private readonly limit: number, private readonly lines = Number.POSITIVE_INFINITY) {}

  get unreadChars(): number {
    return this._chars
  }

  /** Unread characters dropped since the last `take`. */
  get droppedChars(): number {
    return this._dropped
  }

  push(text: string): void {
    if (text === '') return
    this._chunks.push(text)
    this._chars += text.length
    this._newlines += countNewlines(text)
    if (this._chars > this.limit) this.trim()
    if (this.lineCount() > this.lines) this.trimLines(this.lineCount() - this.lines)
  }

  /** Everything unread, and what was dropped before it; both start again from zero. */
  take(): { output: string; droppedChars: number } {
    const output = this._chunks.join('')
    const droppedChars = this._dropped
    this._chunks = []
    this._chars = 0
    this._newlines = 0
    this._dropped = 0
    return { output, droppedChars }
  }

  /** Lines in the unread text, as `countLines` of @rein/base counts them. */
  private lineCount(): number {
    if (this._chars === 0) return 0
    return this._chunks.at(-1)?.endsWith('\n') === true ? this._newlines : this._newlines + 1
  }

  private trim(): void {
    let excess = this._chars - this.limit
    for (let first = this._chunks[0]; excess > 0 && first !== undefined; first = this._chunks[0]) {
      if (first.length <= excess) {
        this._chunks.shift()
        excess -= first.length
        this.drop(first)
        continue
      }
      // Never split a surrogate pair: the kept text must stay valid UTF-16.
      const cut = isLowSurrogate(first.charCodeAt(excess)) ? excess + 1 : excess
      this._chunks[0] = first.slice(cut)
      this.drop(first.slice(0, cut))
      excess = 0
    }
  }

  /** Drops the first `count` lines: everything up to and including their last newline. */
  private trimLines(count: number): void {
    let left = count
    for (let first = this._chunks[0]; left > 0 && first !== undefined; first = this._chunks[0]) {
      const inFirst = countNewlines(first)
      if (inFirst < left) {
        this._chunks.shift()
        left -= inFirst
        this.drop(first)
        continue
      }
      let at = -1
      for (let seen = 0; seen < left; seen++) at = first.indexOf('\n', at + 1)
      const gone = first.slice(0, at + 1)
      if (at + 1 === first.length) this._chunks.shift()
      else this._chunks[0] = first.slice(at + 1)
      this.drop(gone)
      left = 0
    }
  }

  private drop(text: string): void {
    this._chars -= text.length
    this._newlines -= countNewlines(text)
    this._dropped += text.length
  }
}


function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
