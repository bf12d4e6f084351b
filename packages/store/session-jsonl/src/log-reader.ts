/**
 * A log read a piece at a time, for `list`: its header and each event are handed on as they are
 * read, and nothing is held longer than a line of at most LINE_BYTES (longer ones are read by
 * PrunedJsonParser, keeping a bounded part). A log of a GB, or one line of a hundred MB, is listed
 * in a few MB. It accepts and refuses what parseSessionFile does, with the same errors.
 */

import type { FileHandle } from 'node:fs/promises'
import type { SessionEvent, SessionHeader } from '@rein/session'
import { constants } from 'node:buffer'
import { corrupt, hasByteOrderMark, lineTooLong, toEvent, toHeader } from './jsonl-format.ts'
import { PrunedJsonParser, type PrunedValue } from './pruned-json.ts'

/** Bytes read at once. */
const READ_BYTES = 64 * 1024
/** A line up to this long is held and parsed whole (exactly, and fastest); a longer one is read by PrunedJsonParser. */
const LINE_BYTES = 256 * 1024

const NEWLINE = 0x0a

/** What a reader of a log is handed. */
export interface LogVisitor {
  header(header: SessionHeader): void
  /** `lossy`: the event's data lacks fields an over-long line held (see PrunedJsonParser): shape checks do not hold for it. */
  event(event: SessionEvent, lossy: boolean): void
}

/** Reads the log open at `handle` (named `file`, of session `id`) from its start, to `visit`. */
export async function readLogLines(handle: FileHandle, file: string, id: string, visit: LogVisitor): Promise<void> {
  const lines = new LineSink(file, id, visit)
  let line = new LineBuffer()
  let first = true
  // One buffer, read into again and again: a line held keeps a copy of its bytes, not the buffer.
  const chunk = Buffer.allocUnsafe(READ_BYTES)
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, READ_BYTES, null)
    if (bytesRead === 0) break
    let bytes = chunk.subarray(0, bytesRead)
    // An editor may save a hand-edited log with a byte-order mark (a regular file's first read is whole).
    if (first && hasByteOrderMark(bytes)) bytes = bytes.subarray(3)
    first = false
    for (let start = 0; start < bytes.length;) {
      const newline = bytes.indexOf(NEWLINE, start)
      if (newline === -1) {
        line.add(bytes.subarray(start))
        break
      }
      // Most lines lie within one read: parsed where they are, not copied first.
      if (line.isEmpty()) lines.line(parseHeld(bytes.subarray(start, newline)))
      else {
        line.add(bytes.subarray(start, newline))
        lines.line(line.finish(file))
        line = new LineBuffer()
      }
      start = newline + 1
    }
  }
  lines.end(line.isEmpty() ? undefined : line.finish(file))
}

/** What a line held: a value, or none (and whether it was blank). */
interface LineResult {
  parsed: PrunedValue | undefined
  blank: boolean
}

/** One line's bytes: held while short, handed to a PrunedJsonParser once longer than LINE_BYTES. */
class LineBuffer {
  private held: Buffer[] = []
  private length = 0
  private parser: PrunedJsonParser | undefined

  add(bytes: Buffer): void {
    if (bytes.length === 0) return
    this.length += bytes.length
    if (this.parser) return this.parser.feed(bytes)
    if (this.length <= LINE_BYTES) return void this.held.push(Buffer.from(bytes))
    this.parser = new PrunedJsonParser()
    for (const piece of this.held) this.parser.feed(piece)
    this.parser.feed(bytes)
    this.held = []
  }

  isEmpty(): boolean {
    return this.length === 0
  }

  /** What the line held; a line `load` could not decode (longer than a string) is refused as it refuses it. */
  finish(file: string): LineResult {
    if (this.length > constants.MAX_STRING_LENGTH) throw lineTooLong(file, this.length)
    if (this.parser) return this.parser.finish()
    return parseHeld(this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held))
  }
}

/** A line held whole (at most LINE_BYTES), parsed as parseSessionFile parses one. */
function parseHeld(bytes: Buffer): LineResult {
  const text = bytes.toString('utf8')
  try {
    return { parsed: { value: JSON.parse(text) as unknown, lossy: false }, blank: false }
  } catch {
    return { parsed: undefined, blank: BLANK_LINE.test(text) }
  }
}

/** As parseSessionFile reads a blank line: spaces, tabs and a CR only. */
const BLANK_LINE = /^[ \t\r]*$/

/** Lines in file order, checked as parseSessionFile checks them. */
class LineSink {
  private count = 0
  private seq = 0

  constructor(private readonly file: string, private readonly id: string, private readonly visit: LogVisitor) {}

  /** A whole line (it ended with a newline). */
  line({ parsed, blank }: LineResult): void {
    const number = ++this.count
    if (number === 1) {
      if (!parsed) throw corrupt(this.file, 1, 'not a rein session file')
      return this.visit.header(toHeader(parsed.value, this.file, this.id))
    }
    if (parsed) return this.take(parsed, number)
    if (!blank) throw corrupt(this.file, number, 'not valid JSON')
  }

  /** The end of the file, with the bytes after its last newline if any: kept when whole JSON, else a torn write, dropped. */
  end(tail: LineResult | undefined): void {
    const parsed = tail?.parsed
    if (this.count === 0) {
      if (!parsed) throw corrupt(this.file, 1, 'not a rein session file')
      return this.visit.header(toHeader(parsed.value, this.file, this.id))
    }
    if (parsed) this.take(parsed, this.count + 1)
  }

  private take(parsed: PrunedValue, line: number): void {
    this.visit.event(toEvent(parsed.value, this.seq++, this.file, line), parsed.lossy)
  }
}
