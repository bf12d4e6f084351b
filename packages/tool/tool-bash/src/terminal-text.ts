/**
 * One pipe's bytes as text a model can read: what a program wrote for a terminal made plain.
 * Escape sequences (colour, cursor moves, titles, hyperlinks) are dropped whole; a line redrawn
 * with carriage returns (a progress bar) keeps only its last state, as a terminal would show it
 * (CRLF is one break); nroff overstrike (`N\bN`, `_\bN`) becomes its letter, as `col -b` makes it;
 * other control characters become their visible Control Pictures (NUL → ␀, ESC → ␛); lines that
 * look binary are replaced by one note counting their bytes. Works as output streams: a sequence,
 * a CRLF, a redrawn line or a UTF-8 character split between chunks is handled whole, so the text
 * does not depend on where the pipe cut it.
 */

import { StringDecoder } from 'node:string_decoder'
import { groupDigits } from '@rein/base'

// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const SPECIAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/
/** What can make a line binary when no binary run is open (U+FFFD alone cannot: a run needs control characters to start). */
// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const MAY_BE_BINARY = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]/
/** What a line holds that text does not (tested before counting them). */
// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const SUSPICIOUS = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]/
/** What a line holds that text does not, but for a backspace. */
// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const NOT_TEXT = /[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]/
/** Shown as a Control Picture: every control character but tab, newline and CR (left for the redraw). */
// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const PICTURED = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/
// oxlint-disable-next-line no-control-regex -- control characters are what it replaces
const PICTURED_ALL = new RegExp(PICTURED.source, 'g')
/**
 * A whole escape sequence (ECMA-48), matching what sequenceLength measures. CSI: `ESC [` params,
 * intermediates, a final byte. OSC, DCS, SOS, PM, APC: `ESC ] P X ^ _` to BEL or ST (`ESC \`), or
 * up to an ESC that starts no ST. Others: `ESC`, intermediates, a final byte (with none, a final
 * that opens none of the above).
 */
const SEQUENCE =
  // oxlint-disable-next-line no-control-regex -- escape sequences are what it finds
  /\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|[\x50\x58\x5d\x5e\x5f][^\x07\x1b]*(?:\x07|\x1b\\|(?=\x1b[^\\]))|[\x20-\x2f]+[\x30-\x7e]|[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e])/g
/** A struck-over letter: `X\bX` (bold) and `_\bX` (underline) leave `X`, as `col -b` does. */
// oxlint-disable-next-line no-control-regex -- backspaces are what it finds
const OVERSTRIKE = /_\x08(?=[^\x00-\x1f\x7f])|([^\x00-\x1f\x7f])\x08(?=\1)/gu
/** CRs before a line break: one break (a CR with nothing after it overwrites nothing). */
const BREAK = /\r+\n/g
/** Past this, held text is no sequence that is still coming: it is shown as it is. */
const MAX_HELD = 4096
/** Past this many characters, a line being redrawn is shown as it stands instead of held for its last state. */
const MAX_REDRAW = 65536
const ESC = 0x1b

/** The line that stands for `bytes` of binary output. */
function binaryNote(bytes: number): string {
  return `[${groupDigits(bytes)} bytes of binary output not shown; redirect it to a file and look at it with file, xxd or strings]`
}

/** Turns one pipe's chunks into plain text for the model, chunk by chunk (see the module comment). */
export class TerminalText {
  private readonly decoder = new StringDecoder('utf8')
  /** Decoded text held back: an escape sequence not finished yet, or a letter and backspace that may be struck over. */
  private held = ''
  /** Bytes of the binary lines read since the last text shown (the note is written when they end). */
  private binaryBytes = 0
  /** Whether the cleaned text so far (before redraws are applied) ends a line: a note starts on a line of its own. */
  private cleanEndsLine = true
  /** The line being redrawn, held for its last state: its text, and `\r` at its end while a CR waits for what follows. */
  private redraw = ''
  /** Whether the text given out so far stops inside a line. */
  private lineOpen = false

  /** The text for one chunk (possibly empty: held until its sequence, line or character is whole). */
  write(chunk: Buffer): string {
    const text = this.decoder.write(chunk)
    // Most output needs nothing: decoded and passed on.
    if (this.binaryBytes === 0 && this.held === '' && this.redraw === '' && !SPECIAL.test(text)) return this.given(this.cleaned(text))
    return this.redrawn(this.plain(chunk, text), false)
  }

  /**
   * The last state of the line held while it is being redrawn, as it would be given if the pipe
   * closed now; '' when none is held. Changes nothing: a background job shows it while it runs.
   */
  pending(): string {
    return this.redraw.endsWith('\r') ? this.redraw.slice(0, -1) : this.redraw
  }

  /** What is still held once the pipe closed: an unfinished sequence shown as text, a redrawn line's last state, the note of a binary end. */
  end(): string {
    const rest = this.decoder.end()
    let out = rest === '' ? '' : this.line(rest, Buffer.byteLength(rest), true)
    if (this.held !== '') out += this.clean('', true)
    return this.redrawn(out + this.note(), true)
  }

  /** The chunk cleaned; split into lines only when one of them may be binary. */
  private plain(chunk: Buffer, text: string): string {
    if (this.binaryBytes === 0 && !MAY_BE_BINARY.test(text)) return this.clean(text, false, true)
    if (this.binaryBytes === 0 && text.includes('\b') && !MAY_BE_BINARY.test(text.replace(OVERSTRIKE, ''))) return this.clean(text, false)
    const parts: string[] = []
    let at = 0
    let byteAt = 0
    // A binary line is told apart from a text line beside it; consecutive text lines are cleaned together.
    let textFrom = 0
    while (at < text.length) {
      const newline = text.indexOf('\n', at)
      const end = newline === -1 ? text.length : newline + 1
      const byteEnd = newline === -1 ? chunk.length : chunk.indexOf(0x0a, byteAt) + 1
      const line = text.slice(at, end)
      if (this.binaryBytes > 0 || SUSPICIOUS.test(line)) {
        parts.push(this.clean(text.slice(textFrom, at), false), this.line(line, byteEnd - byteAt, false))
        textFrom = end
      }
      at = end
      byteAt = byteEnd
    }
    parts.push(this.clean(text.slice(textFrom), false))
    // Bytes of a character not finished yet belong to the last line (in a binary run, they count).
    if (byteAt < chunk.length) parts.push(this.line('', chunk.length - byteAt, false))
    return parts.join('')
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
    // Within a run, anything but a backspace (which may strike a letter over) goes on with it.
    if (this.binaryBytes > 0 && NOT_TEXT.test(text)) return true
    const { controls, loneNuls, invalid } = suspicious(text.includes('\b') ? text.replace(OVERSTRIKE, '') : text)
    if (this.binaryBytes > 0) return controls + invalid > 0 || text.trim() === ''
    const counted = controls - loneNuls
    return counted >= 4 && (counted + invalid) * 10 >= text.length * 3
  }

  /** The note for the binary run that just ended, on a line of its own; empty when none did. */
  private note(): string {
    if (this.binaryBytes === 0) return ''
    const note = `${this.cleanEndsLine ? '' : '\n'}${binaryNote(this.binaryBytes)}\n`
    this.binaryBytes = 0
    return this.cleaned(note)
  }

  /**
   * `text` after the held text, made plain but for CRs (left for redrawn); an unfinished sequence,
   * or a letter and backspace, at its end is held unless `final`.
   */
  private clean(text: string, final: boolean, noControls = false): string {
    // `noControls`: the caller found none in `text` but ESC and CR, so only held text can bring them.
    const controls = !noControls || this.held !== ''
    let input = this.held + text
    this.held = ''
    if (input === '') return ''
    if (controls && input.includes('\b')) input = input.replace(OVERSTRIKE, '')
    const escapes = input.includes('\x1b')
    if (!final) {
      const from = heldFrom(input, escapes)
      if (from < input.length) {
        this.held = input.slice(from)
        input = input.slice(0, from)
      }
    }
    if (escapes) input = input.replace(SEQUENCE, '')
    if ((controls || (escapes && input.includes('\x1b'))) && PICTURED.test(input)) input = input.replace(PICTURED_ALL, picture)
    return this.cleaned(input)
  }

  private cleaned(text: string): string {
    if (text !== '') this.cleanEndsLine = text.endsWith('\n')
    return text
  }

  /**
   * Cleaned text with its redraws applied: a line keeps only the text after its last CR that
   * something followed. The line being written is held while it may still be redrawn (up to
   * MAX_REDRAW characters); a line already partly given out cannot be taken back, so its last
   * state starts a line of its own.
   */
  private redrawn(text: string, final: boolean): string {
    if (this.redraw === '' && !text.includes('\r')) return this.given(text)
    const wasRedrawing = this.redraw !== ''
    const input = this.redraw + text
    this.redraw = ''
    const parts: string[] = []
    const firstBreak = input.indexOf('\n')
    if (this.lineOpen && overwrites(firstBreak === -1 ? input : input.slice(0, firstBreak))) parts.push('\n')
    const lastBreak = input.lastIndexOf('\n')
    if (lastBreak !== -1) parts.push(lastStates(input.slice(0, lastBreak + 1)))
    const tail = input.slice(lastBreak + 1)
    if (final || (!tail.includes('\r') && !(wasRedrawing && lastBreak === -1))) parts.push(lastState(tail, false))
    else {
      const state = lastState(tail, true)
      if (state.length <= MAX_REDRAW) this.redraw = state
      else if (state.endsWith('\r')) {
        parts.push(state.slice(0, -1))
        this.redraw = '\r'
      } else parts.push(state)
    }
    return this.given(parts.join(''))
  }

  private given(text: string): string {
    if (text !== '') this.lineOpen = !text.endsWith('\n')
    return text
  }
}

/** Whether a line (no line break in it) has text after a CR: what the terminal showed of it is overwritten. */
function overwrites(line: string): boolean {
  for (let cr = line.indexOf('\r'); cr !== -1; cr = line.indexOf('\r', cr + 1)) {
    if (cr + 1 < line.length && line.charCodeAt(cr + 1) !== 0x0d) return true
  }
  return false
}

/** Whole lines (each ending in `\n`), each cut to what follows its last CR that something followed. */
function lastStates(lines: string): string {
  const text = lines.replace(BREAK, '\n')
  let cr = text.indexOf('\r')
  if (cr === -1) return text
  const parts: string[] = []
  let from = 0
  while (cr !== -1) {
    const lineEnd = text.indexOf('\n', cr)
    parts.push(text.slice(from, text.lastIndexOf('\n', cr) + 1))
    // No CR is left before a line break: the last one in the line has text after it.
    from = text.lastIndexOf('\r', lineEnd) + 1
    cr = text.indexOf('\r', lineEnd)
  }
  parts.push(text.slice(from))
  return parts.join('')
}

/** A line not ended yet, cut to its last state; with `pending`, CRs at its end are kept as one (what follows decides). */
function lastState(line: string, pending: boolean): string {
  let end = line.length
  while (end > 0 && line.charCodeAt(end - 1) === 0x0d) end--
  const state = line.slice(line.lastIndexOf('\r', end - 1) + 1, end)
  return pending && end < line.length ? `${state}\r` : state
}

/**
 * Where the text to hold for the next chunk starts (its length when none): an escape sequence the
 * text ends inside (only the last ESC, or one before it opening a string that ESC may end, can
 * start one), or a letter and backspace that the next letter may strike over.
 */
function heldFrom(input: string, escapes: boolean): number {
  const last = escapes ? input.lastIndexOf('\x1b') : -1
  if (last !== -1) {
    const before = last === 0 ? -1 : input.lastIndexOf('\x1b', last - 1)
    for (const at of [before, last]) {
      if (at !== -1 && input.length - at <= MAX_HELD && sequenceLength(input, at) === 'unfinished') return at
    }
  }
  if (input.length < 2 || input.charCodeAt(input.length - 1) !== 0x08) return input.length
  const letter = input.length - 2
  return letter > 0 && isLowSurrogate(input.charCodeAt(letter)) ? letter - 1 : letter
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

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
function picture(char: string): string {
  const code = char.charCodeAt(0)
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
