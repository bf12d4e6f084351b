/**
 * Keeps what the preview of an unbounded stream of text needs and nothing more: the head as it
 * arrives and a window of the last characters. At the end it gives exactly what
 * `excerpt(wholeText, limits)` would, without ever holding the whole text — for a tool whose
 * output streams (bash), next to the `excerpt` the agent uses for whole results.
 */

import { countNewlines, cutHead, cutTail } from '@rein/base'
import type { SpillExcerpt, SpillLimits } from './spill-preview.ts'

/** Keeps the head and tail of a stream of output, as `excerpt` cuts whole text, without holding all of it. */
export class SpillKeeper {
  private readonly headMaxLines: number
  private readonly headMaxChars: number
  private readonly tailMaxLines: number
  private readonly tailMaxChars: number
  /** How many last characters the tail window keeps: the tail's budget, plus enough to see where a line starts. */
  private readonly windowSize: number

  private totalChars = 0
  private newlines = 0
  /** Whether the text so far ends with a newline: its last line is then finished, and no new one begun. */
  private endsWithNewline = false
  private readonly head: string[] = []
  private headChars = 0
  /** The head's current, unfinished line; never longer than the head's budget plus one. */
  private headLine = ''
  private headDone: boolean
  private window = ''

  constructor(readonly limits: SpillLimits) {
    // The same split as `excerpt`: half of each limit for the head, a quarter for the tail.
    this.headMaxLines = Math.floor(limits.lines / 2)
    this.headMaxChars = Math.floor(limits.chars / 2)
    this.tailMaxLines = Math.floor(limits.lines / 4)
    this.tailMaxChars = Math.floor(limits.chars / 4)
    this.windowSize = this.tailMaxChars + 2
    this.headDone = this.headMaxLines === 0
  }

  /** Characters seen so far. */
  get chars(): number {
    return this.totalChars
  }

  /** Lines seen so far, counted as @rein/base's `countLines` counts them. */
  get lines(): number {
    return this.newlines + (this.totalChars === 0 || this.endsWithNewline ? 0 : 1)
  }

  /** Whether the text so far is past either limit (the same test the agent's spill uses). */
  get long(): boolean {
    return this.totalChars > this.limits.chars || this.lines > this.limits.lines
  }

  append(text: string): void {
    if (text === '') return
    this.totalChars += text.length
    this.newlines += countNewlines(text)
    this.endsWithNewline = text.endsWith('\n')
    if (!this.headDone) this.feedHead(text)
    this.window = text.length >= this.windowSize ? text.slice(-this.windowSize) : (this.window + text).slice(-this.windowSize)
  }

  /** The head and tail `excerpt` would give for all the text appended. */
  excerpt(): SpillExcerpt {
    // After a final newline (or no text) there is no unfinished line to take.
    if (!this.headDone && this.lines > this.head.length) this.takeHeadLine(this.headLine)
    this.headDone = true
    const head = this.head.join('\n')
    // As `excerpt`: one line cut for the head shows its end as a tail too, counted once.
    const onlyLineCut = this.lines === 1 && head.length < this.totalChars - (this.endsWithNewline ? 1 : 0)
    const tail = onlyLineCut ? [cutTail(this.window.replace(/\n$/, ''), this.tailMaxChars)] : this.tail()
    return {
      head,
      headLines: this.head.length,
      tail: tail.join('\n'),
      tailLines: onlyLineCut ? 0 : tail.length,
      totalChars: this.totalChars,
      totalLines: this.lines,
    }
  }

  private feedHead(text: string) {
    let from = 0
    while (!this.headDone) {
      const newline = text.indexOf('\n', from)
      const piece = newline === -1 ? text.slice(from) : text.slice(from, newline)
      if (this.headLine.length <= this.headMaxChars) this.headLine += piece.slice(0, this.headMaxChars + 1 - this.headLine.length)
      if (newline === -1) {
        // An unfinished line already too long for the head can only grow: decide now.
        if (this.headChars + this.headLine.length + 1 > this.headMaxChars) this.takeHeadLine(this.headLine)
        return
      }
      const line = this.headLine
      this.headLine = ''
      this.takeHeadLine(line)
      from = newline + 1
    }
  }

  /** One line for the head, by `excerpt`'s rule: whole lines within both limits; a first line too long is cut. */
  private takeHeadLine(line: string) {
    if (this.headChars + line.length + 1 > this.headMaxChars) {
      if (this.head.length === 0) this.head.push(cutHead(line, this.headMaxChars))
      this.headDone = true
      return
    }
    this.head.push(line)
    this.headChars += line.length + 1
    if (this.head.length >= this.headMaxLines) this.headDone = true
  }

  /** Whole lines from the end, within both limits, never reaching into the head's lines. */
  private tail(): string[] {
    const segments = this.window === '' ? [] : this.window.split('\n')
    if (this.endsWithNewline) segments.pop()
    // The window's first segment is a whole line only when the window holds the whole text.
    const firstIndex = this.lines - segments.length
    const taken: string[] = []
    let chars = 0
    for (let i = segments.length - 1; i >= 0 && taken.length < this.tailMaxLines; i--) {
      if (firstIndex + i < this.head.length) break
      const line = segments[i] ?? ''
      if (chars + line.length + 1 > this.tailMaxChars) {
        if (taken.length === 0) taken.push(cutTail(line, this.tailMaxChars))
        break
      }
      taken.push(line)
      chars += line.length + 1
    }
    return taken.reverse()
  }
}
