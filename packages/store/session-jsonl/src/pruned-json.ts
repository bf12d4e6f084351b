/**
 * One JSON value read a piece at a time, keeping only a bounded part of it: `list` summarizes a log
 * holding a line of a hundred MB (a pasted file, a huge tool output) without holding that line.
 * Every byte is checked as `JSON.parse` would, so a line it accepts is one `load` accepts. What it
 * keeps: every string's first STRING_BYTES (at least TITLE_SCAN_CHARS characters, so a title made of
 * it is the one the whole line makes), and every value until RETAIN_BYTES are kept; past that, array
 * elements are dropped (never an event's own fields), strings cut shorter, and past a further
 * margin object fields too (the value is then `lossy`: a shape check could miss what was dropped).
 */

import { TITLE_SCAN_CHARS } from '@rein/session'

/** A string's raw bytes kept: an escaped character (`\uXXXX`) is six bytes for one; one more than a title scans, so a cut one is seen as cut. */
const STRING_BYTES = 6 * (TITLE_SCAN_CHARS + 1)
/** Once RETAIN_BYTES are kept, a string's bytes kept: enough for a model's name or a reason. */
const SMALL_STRING_BYTES = 256
/** Bytes of values kept before array elements are dropped. */
const RETAIN_BYTES = 256 * 1024
/** Bytes of values kept before object fields are dropped too. */
const RETAIN_FIELDS_BYTES = 1024 * 1024
/** Digits kept of a number; a longer one (no writer makes one) is kept as null and the value is lossy. */
const NUMBER_BYTES = 512
/** Containers nested deeper than this are refused, checked or not, so the nesting kept is bounded too. */
const MAX_DEPTH = 4096
/** What a kept value costs beside its characters: a rough figure, only to bound what is kept. */
const NODE_COST = 16

/** What the next bytes are read as. */
const Mode = { Structure: 0, String: 1, Number: 2, Literal: 3, Failed: 4 } as const
/** What the structure expects next. */
const Expect = { Value: 0, ValueOrEnd: 1, KeyOrEnd: 2, Key: 3, Colon: 4, CommaOrEnd: 5, Done: 6 } as const

interface Frame {
  /** The array or object being built; undefined while its elements are only checked, not kept. */
  value: unknown[] | Record<string, unknown> | undefined
  isArray: boolean
  key: string | undefined
  /** The current field's value is kept. */
  keepField: boolean
}

/** What a line held: its value (pruned as above), or nothing when it is not one JSON value. */
export interface PrunedValue {
  value: unknown
  /** Object fields or a number were dropped: checks of the value's shape do not hold for it. */
  lossy: boolean
}

/** Feed a line's bytes (without its newline) with `feed`, then `finish`; `feed` may reuse its buffer after each call. */
export class PrunedJsonParser {
  private mode: number = Mode.Structure
  private expect: number = Expect.Value
  private readonly stack: Frame[] = []
  private result: unknown
  private spent = 0
  private lossy = false
  /** No byte but a space, tab or CR yet: a line that stays so is blank, as an editor leaves one. */
  private blankSoFar = true
  // The token being read.
  private keep = false
  private isKey = false
  private pieces: Buffer[] = []
  private piecesLength = 0
  private pieceLimit = 0
  private stringCut = false
  /** 0: none; 1: after a backslash; 2–5: that many hex digits of \uXXXX still due, less one. */
  private escape = 0
  private numberState: number = NumberState.Minus
  private literal = ''
  private literalAt = 0

  /** Takes the next bytes of the line. */
  feed(bytes: Buffer): void {
    let index = 0
    const length = bytes.length
    while (index < length && this.mode !== Mode.Failed) {
      if (this.mode === Mode.String) index = this.readString(bytes, index)
      else if (this.mode === Mode.Number) index = this.readNumber(bytes, index)
      else if (this.mode === Mode.Literal) index = this.readLiteral(bytes, index)
      else index = this.readStructure(bytes, index)
    }
  }

  /** The value, or undefined when the line is not one JSON value; `blank` when it held only spaces, tabs and CRs. */
  finish(): { parsed: PrunedValue | undefined; blank: boolean } {
    if (this.mode === Mode.Number) {
      if (isNumberEnd(this.numberState)) this.endNumber()
      else this.mode = Mode.Failed
    }
    const done = this.mode === Mode.Structure && this.expect === Expect.Done
    return { parsed: done ? { value: this.result, lossy: this.lossy } : undefined, blank: this.blankSoFar }
  }

  private fail(): number {
    this.mode = Mode.Failed
    return Number.MAX_SAFE_INTEGER
  }

  private readStructure(bytes: Buffer, start: number): number {
    let index = start
    while (index < bytes.length) {
      const byte = bytes[index]!
      if (byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a) {
        index++
        continue
      }
      this.blankSoFar = false
      switch (this.expect) {
        case Expect.Done:
          return this.fail()
        case Expect.Colon:
          if (byte !== 0x3a) return this.fail()
          this.expect = Expect.Value
          return index + 1
        case Expect.CommaOrEnd:
          if (byte === 0x2c) {
            this.expect = this.top()!.isArray ? Expect.Value : Expect.Key
            return index + 1
          }
          return this.close(byte) ? index + 1 : this.fail()
        case Expect.KeyOrEnd:
        case Expect.Key:
          if (byte === 0x22) {
            this.startString(true)
            return index + 1
          }
          return this.expect === Expect.KeyOrEnd && this.close(byte) ? index + 1 : this.fail()
        case Expect.ValueOrEnd:
          if (this.close(byte)) return index + 1
          return this.startValue(byte) ? index + 1 : this.fail()
        case Expect.Value:
          return this.startValue(byte) ? index + 1 : this.fail()
      }
    }
    return index
  }

  private top(): Frame | undefined {
    return this.stack.at(-1)
  }

  /** `]` or `}` closing the innermost container (the right one). */
  private close(byte: number): boolean {
    const frame = this.top()
    if (!frame || byte !== (frame.isArray ? 0x5d : 0x7d)) return false
    this.stack.pop()
    this.emit(frame.value, frame.value !== undefined)
    return true
  }

  /** Whether the value starting now is kept. */
  private keepNext(): boolean {
    const frame = this.top()
    if (!frame) return true
    if (!frame.isArray) return frame.keepField
    return frame.value !== undefined && this.spent < RETAIN_BYTES
  }

  private startValue(byte: number): boolean {
    const keep = this.keepNext()
    if (byte === 0x7b || byte === 0x5b) {
      // Deeper than rein's own writer (a recursive copy) could ever write: not a line rein made.
      if (this.stack.length >= MAX_DEPTH) return false
      const isArray = byte === 0x5b
      if (keep) this.spent += NODE_COST
      this.stack.push({ value: keep ? (isArray ? [] : {}) : undefined, isArray, key: undefined, keepField: false })
      this.expect = isArray ? Expect.ValueOrEnd : Expect.KeyOrEnd
      return true
    }
    this.keep = keep
    if (byte === 0x22) {
      this.startString(false)
      return true
    }
    if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      this.mode = Mode.Number
      this.numberState = byte === 0x2d ? NumberState.Minus : byte === 0x30 ? NumberState.Zero : NumberState.Integer
      this.startPieces(NUMBER_BYTES)
      this.pieces.push(Buffer.of(byte))
      this.piecesLength = 1
      return true
    }
    const literal = byte === 0x74 ? 'true' : byte === 0x66 ? 'false' : byte === 0x6e ? 'null' : undefined
    if (literal === undefined) return false
    this.mode = Mode.Literal
    this.literal = literal
    this.literalAt = 1
    return true
  }

  /** A value is complete: into its container if kept, or the result. */
  private emit(value: unknown, kept: boolean): void {
    const frame = this.top()
    if (!frame) {
      this.result = value
      this.expect = Expect.Done
      return
    }
    this.expect = Expect.CommaOrEnd
    if (!kept || frame.value === undefined) return
    if (frame.isArray) {
      (frame.value as unknown[]).push(value)
      return
    }
    const key = frame.key!
    // As JSON.parse does: a "__proto__" field is the object's own, not its prototype.
    if (key === '__proto__') Object.defineProperty(frame.value, key, { value, writable: true, enumerable: true, configurable: true })
    else (frame.value as Record<string, unknown>)[key] = value
  }

  private startPieces(limit: number): void {
    this.pieces = []
    this.piecesLength = 0
    this.pieceLimit = limit
  }

  private startString(isKey: boolean): void {
    this.mode = Mode.String
    this.isKey = isKey
    if (isKey) this.keep = this.top()!.value !== undefined
    this.escape = 0
    this.stringCut = false
    this.startPieces(this.spent < RETAIN_BYTES ? STRING_BYTES : SMALL_STRING_BYTES)
  }

  private readString(bytes: Buffer, start: number): number {
    let index = start
    const length = bytes.length
    while (index < length) {
      const byte = bytes[index]!
      if (this.escape === 1) {
        if (byte === 0x75) this.escape = 5
        else if (byte === 0x22 || byte === 0x5c || byte === 0x2f || byte === 0x62 || byte === 0x66 || byte === 0x6e || byte === 0x72 || byte === 0x74) this.escape = 0
        else return this.fail()
      } else if (this.escape > 1) {
        if (!isHexDigit(byte)) return this.fail()
        this.escape = this.escape === 2 ? 0 : this.escape - 1
      } else if (byte === 0x22) {
        this.keepPiece(bytes, start, index)
        this.mode = Mode.Structure
        this.endString()
        return index + 1
      } else if (byte === 0x5c) {
        this.escape = 1
      } else if (byte < 0x20) return this.fail()
      index++
    }
    this.keepPiece(bytes, start, index)
    return index
  }

  /** Bytes `start`…`stop` of the string being read, as far as its limit allows. */
  private keepPiece(bytes: Buffer, start: number, stop: number): void {
    if (!this.keep || this.stringCut || stop <= start) return
    const room = this.pieceLimit - this.piecesLength
    if (stop - start > room) {
      this.stringCut = true
      stop = start + room
    }
    if (stop > start) {
      // A copy: the caller reads its next bytes into the same buffer.
      this.pieces.push(Buffer.from(bytes.subarray(start, stop)))
      this.piecesLength += stop - start
    }
  }

  private endString(): void {
    if (!this.keep) {
      if (this.isKey) this.startField(undefined)
      else this.emit(undefined, false)
      return
    }
    const whole = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces)
    this.pieces = []
    // A cut prefix may end inside an escape or a character: the escape is left out, the character is read as U+FFFD.
    const raw = this.stringCut ? withoutTornEscape(whole) : whole
    const text = JSON.parse(`"${raw.toString('utf8')}"`) as string
    this.spent += NODE_COST + text.length
    if (this.isKey) {
      // A cut key is another key: what a check reads under the whole one is not there.
      if (this.stringCut) this.lossy = true
      this.startField(this.stringCut ? undefined : text)
    } else this.emit(text, true)
  }

  /** A field's key is read: its value is kept when the object is and there is room (else the value is lossy). */
  private startField(key: string | undefined): void {
    const frame = this.top()!
    frame.key = key
    frame.keepField = frame.value !== undefined && key !== undefined && this.spent < RETAIN_FIELDS_BYTES
    if (frame.value !== undefined && !frame.keepField) this.lossy = true
    this.expect = Expect.Colon
  }

  private readNumber(bytes: Buffer, start: number): number {
    let index = start
    while (index < bytes.length) {
      const next = nextNumberState(this.numberState, bytes[index]!)
      if (next === NumberState.End) {
        this.keepNumberPiece(bytes, start, index)
        if (!isNumberEnd(this.numberState)) return this.fail()
        this.endNumber()
        return index
      }
      if (next === NumberState.Invalid) return this.fail()
      this.numberState = next
      index++
    }
    this.keepNumberPiece(bytes, start, index)
    return index
  }

  private keepNumberPiece(bytes: Buffer, start: number, stop: number): void {
    if (stop <= start) return
    if (this.piecesLength + stop - start <= this.pieceLimit) this.pieces.push(Buffer.from(bytes.subarray(start, stop)))
    this.piecesLength += stop - start
  }

  private endNumber(): void {
    this.mode = Mode.Structure
    if (!this.keep) return this.emit(undefined, false)
    this.spent += NODE_COST
    if (this.piecesLength > this.pieceLimit) {
      this.lossy = true
      return this.emit(null, true)
    }
    this.emit(Number(Buffer.concat(this.pieces).toString('latin1')), true)
  }

  private readLiteral(bytes: Buffer, start: number): number {
    let index = start
    while (index < bytes.length && this.literalAt < this.literal.length) {
      if (bytes[index] !== this.literal.charCodeAt(this.literalAt)) return this.fail()
      this.literalAt++
      index++
    }
    if (this.literalAt === this.literal.length) {
      this.mode = Mode.Structure
      if (this.keep) this.spent += NODE_COST
      this.emit(this.literal === 'null' ? null : this.literal === 'true', this.keep)
    }
    return index
  }
}

/** `raw` (a string's escaped bytes, cut) without an escape its cut left unfinished. */
function withoutTornEscape(raw: Buffer): Buffer {
  for (let back = raw.length - 1; back >= Math.max(0, raw.length - 6); back--) {
    if (raw[back] !== 0x5c) continue
    // Only a backslash after an even run of them starts an escape (`\\` is one escaped backslash).
    let run = 0
    for (let at = back; at >= 0 && raw[at] === 0x5c; at--) run++
    if (run % 2 === 0) return raw
    const escapeLength = raw[back + 1] === 0x75 ? 6 : 2
    return back + escapeLength > raw.length ? raw.subarray(0, back) : raw
  }
  return raw
}

function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) || (byte >= 0x41 && byte <= 0x46)
}

/** JSON's number grammar, a byte at a time. */
const NumberState = { Minus: 0, Zero: 1, Integer: 2, Dot: 3, Fraction: 4, Exponent: 5, ExponentSign: 6, ExponentDigits: 7, End: 8, Invalid: 9 } as const

function isNumberEnd(state: number): boolean {
  return state === NumberState.Zero || state === NumberState.Integer || state === NumberState.Fraction || state === NumberState.ExponentDigits
}

function nextNumberState(state: number, byte: number): number {
  const digit = byte >= 0x30 && byte <= 0x39
  switch (state) {
    case NumberState.Minus:
      return byte === 0x30 ? NumberState.Zero : digit ? NumberState.Integer : NumberState.Invalid
    case NumberState.Zero:
      return byte === 0x2e ? NumberState.Dot : byte === 0x65 || byte === 0x45 ? NumberState.Exponent : digit ? NumberState.Invalid : NumberState.End
    case NumberState.Integer:
      return digit ? NumberState.Integer : byte === 0x2e ? NumberState.Dot : byte === 0x65 || byte === 0x45 ? NumberState.Exponent : NumberState.End
    case NumberState.Dot:
      return digit ? NumberState.Fraction : NumberState.Invalid
    case NumberState.Fraction:
      return digit ? NumberState.Fraction : byte === 0x65 || byte === 0x45 ? NumberState.Exponent : NumberState.End
    case NumberState.Exponent:
      return digit ? NumberState.ExponentDigits : byte === 0x2b || byte === 0x2d ? NumberState.ExponentSign : NumberState.Invalid
    case NumberState.ExponentSign:
      return digit ? NumberState.ExponentDigits : NumberState.Invalid
    default:
      return digit ? NumberState.ExponentDigits : NumberState.End
  }
}
