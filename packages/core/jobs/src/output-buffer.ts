/** A job's unread output, bounded: when it outgrows its limit the oldest unread characters go, and are counted. */

export class OutputBuffer {
  private _chunks: string[] = []
  private _chars = 0
  private _dropped = 0

  constructor(private readonly limit: number) {}

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
    if (this._chars > this.limit) this.trim()
  }

  /** Everything unread, and what was dropped before it; both start again from zero. */
  take(): { output: string; droppedChars: number } {
    const output = this._chunks.join('')
    const droppedChars = this._dropped
    this._chunks = []
    this._chars = 0
    this._dropped = 0
    return { output, droppedChars }
  }

  private trim(): void {
    let excess = this._chars - this.limit
    for (let first = this._chunks[0]; excess > 0 && first !== undefined; first = this._chunks[0]) {
      if (first.length <= excess) {
        this._chunks.shift()
        excess -= first.length
        this.drop(first.length)
        continue
      }
      // Never split a surrogate pair: the kept text must stay valid UTF-16.
      const cut = isLowSurrogate(first.charCodeAt(excess)) ? excess + 1 : excess
      this._chunks[0] = first.slice(cut)
      this.drop(cut)
      excess = 0
    }
  }

  private drop(chars: number): void {
    this._chars -= chars
    this._dropped += chars
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
