/**
 * One pipe's bytes as text a model can read: what a program wrote for a terminal made plain.
 * Escape sequences (colour, cursor moves, titles, hyperlinks) are dropped whole; a carriage return
 * becomes a line break (CRLF one break); other control characters become their visible Control
 * Pictures (NUL → ␀, ESC → ␛); lines that look binary are replaced by one note counting their
 * bytes. Works as output streams: a sequence, a CRLF or a UTF-8 character split between chunks is
 * handled whole, so the text does not depend on where the pipe cut it.
 */

import { StringDecoder } from 'node:string_decoder'
import { groupDigits } from '@rein/base'

// oxlint-disable-next-line no-control-regex -- control bytes are what it finds
const CONTROL_BYTE = /[\x00-\x08\x0b-\x1f\x7f]/
// oxlint-disable-next-line no-control-regex -- C1 controls are what it finds
const C1 = /[\x80-\x9f]/g
/** Past this, held text is no sequence that is still coming: it is shown as it is. */
const MAX_HELD = 4096
const ESC = 0x1b

/** The line that stands for `bytes` of binary output. */
function binaryNote(bytes: number): string {
  return `[${groupDigits(bytes)} bytes of binary output not shown; redirect it to a file and look at it with file, xxd or strings]`
}

export class TerminalText {
  private readonly decoder = new StringDecoder('utf8')
  /** Decoded text held back: an escape sequence not finished yet, or a `\r` that may begin a CRLF. */
  private held = ''
  /** Bytes of the binary lines read since the last text shown (the note is written when they end). */
  private binaryBytes = 0
  private endsLine = true

  /** The text for one chunk (possibly empty: held until its sequence, line or character is whole). */
  write(chunk: Buffer): string {
    // Most output needs nothing: decoded and passed on (C1 controls, rare, marked).
    if (this.binaryBytes === 0 && this.held === '' && !CONTROL_BYTE.test(chunk.toString('latin1'))) {
      return this.shown(this.decoder.write(chunk).replace(C1, '\ufffd'))
    }
    let out = ''
    let start = 0
    // Line by line: a binary line is told apart from a text line beside it.
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline + 1
      const piece = chunk.subarray(start, end)
      out += this.line(this.decoder.write(piece), piece.length, false)
      start = end
    }
    return out
  }

  /** What is still held once the pipe closed: an unfinished sequence shown as text, the note of a binary end. */
  end(): string {
    const rest = this.decoder.end()
    let out = rest === '' ? '' : this.line(rest, Buffer.byteLength(rest), true)
    if (this.held !== '') out += this.clean('', true)
    return out + this.note()
  }

  private line(text: string, bytes: number, final: boolean): string {
    if (this.isBinary(text)) {
      // Held text went before the binary line: shown as it is, not swallowed.
      const before = this.held === '' ? '' : this.clean('', true)
      this.binaryBytes += bytes
      return before
    }
    return this.note() + this.clean(text, final)
  }

  /**
   * A binary line begins a run when control characters (a lone NUL, as in `find -print0`, does
   * not count) make up much of it with the bytes that are not UTF-8; the run goes on through every
   * line holding any of them (or only whitespace).
   */
  private isBinary(text: string): boolean {
    const { controls, loneNuls, invalid } = suspicious(text)
    if (this.binaryBytes > 0) return controls + invalid > 0 || text.trim() === ''
    const counted = controls - loneNuls
    return counted >= 4 && (counted + invalid) * 10 >= text.length * 3
  }

  /** The note for the binary run that just ended, on a line of its own; empty when none did. */
  private note(): string {
    if (this.binaryBytes === 0) return ''
    const note = `${this.endsLine ? '' : '\n'}${binaryNote(this.binaryBytes)}\n`
    this.binaryBytes = 0
    return this.shown(note)
  }

  /** `text` after the held text, made plain; an unfinished sequence or `\r` at its end is held unless `final`. */
  private clean(text: string, final: boolean): string {
    const input = this.held + text
    this.held = ''
    let out = ''
    let from = 0
    for (let i = 0; i < input.length; i++) {
      const code = input.charCodeAt(i)
      if (code >= 0x20 && code !== 0x7f && (code < 0x80 || code > 0x9f)) continue
      if (code === 0x09 || code === 0x0a) continue
      out += input.slice(from, i)
      if (code === 0x0d) {
        if (i + 1 === input.length && !final) {
          this.held = '\r'
          return this.shown(out)
        }
        // CRLF is one break; a lone CR (a progress bar's redraw) starts a new line.
        if (input.charCodeAt(i + 1) !== 0x0a) out += '\n'
        from = i + 1
        continue
      }
      if (code === ESC) {
        const length = sequenceLength(input, i)
        if (length === 'unfinished' && !final && input.length - i <= MAX_HELD) {
          this.held = input.slice(i)
          return this.shown(out)
        }
        if (typeof length === 'number') {
          from = i + length
          i = from - 1
          continue
        }
      }
      out += picture(code)
      from = i + 1
    }
    return this.shown(out + input.slice(from))
  }

  private shown(text: string): string {
    if (text !== '') this.endsLine = text.endsWith('\n')
    return text
  }
}

/** What a line holds that text does not: control characters (lone NULs counted apart too) and U+FFFD (bytes not UTF-8). */
function suspicious(text: string): { controls: number; loneNuls: number; invalid: number } {
  let controls = 0
  let loneNuls = 0
  let invalid = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0xfffd) invalid++
    else if (code === 0) {
      controls++
      if (text.charCodeAt(i - 1) !== 0 && text.charCodeAt(i + 1) !== 0) loneNuls++
    } else if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== ESC) || (code >= 0x7f && code <= 0x9f)) controls++
  }
  return { controls, loneNuls, invalid }
}

/** The visible stand-in for a control character: its Control Picture (C0, DEL), or U+FFFD (C1). */
function picture(code: number): string {
  if (code < 0x20) return String.fromCharCode(0x2400 + code)
  return code === 0x7f ? '\u2421' : '\ufffd'
}

const inRange = (code: number, low: number, high: number) => code >= low && code <= high

/**
 * The length of the escape sequence (ECMA-48) at `start`, `unfinished` when the text ends inside
 * one, `invalid` when what follows the ESC is none (it is then shown as ␛). CSI: `ESC [` params,
 * intermediates, a final byte. OSC, DCS, SOS, PM, APC: `ESC ] P X ^ _` to BEL or ST (`ESC \`); an
 * ESC that starts no ST ends the string there. Others: `ESC`, intermediates, a final byte.
 */
function sequenceLength(text: string, start: number): number | 'unfinished' | 'invalid' {
  let i = start + 1
  if (i >= text.length) return 'unfinished'
  const kind = text.charCodeAt(i)
  if (kind === 0x5b) {
    i++
    while (i < text.length && inRange(text.charCodeAt(i), 0x30, 0x3f)) i++
    while (i < text.length && inRange(text.charCodeAt(i), 0x20, 0x2f)) i++
    if (i >= text.length) return 'unfinished'
    return inRange(text.charCodeAt(i), 0x40, 0x7e) ? i + 1 - start : 'invalid'
  }
  if (kind === 0x5d || kind === 0x50 || kind === 0x58 || kind === 0x5e || kind === 0x5f) {
    for (i++; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === 0x07) return i + 1 - start
      if (code !== ESC) continue
      if (i + 1 >= text.length) return 'unfinished'
      return text.charCodeAt(i + 1) === 0x5c ? i + 2 - start : i - start
    }
    return 'unfinished'
  }
  while (i < text.length && inRange(text.charCodeAt(i), 0x20, 0x2f)) i++
  if (i >= text.length) return 'unfinished'
  return inRange(text.charCodeAt(i), 0x30, 0x7e) ? i + 1 - start : 'invalid'
}
