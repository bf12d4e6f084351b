/**
 * The file format: line 1 is the header marked `"kind":"rein-session"`, then one event per line.
 * Parsing drops only a torn final line and reports anything else malformed by file and line.
 */

import { isAscii } from 'node:buffer'
import { ReinError, toFrozenJson } from '@rein/base'
import { SESSION_FORMAT_VERSION, type SessionEvent, type SessionHeader } from '@rein/session'

/** The `kind` on every header line; a file without it is not a rein session. */
export const SESSION_FILE_KIND = 'rein-session'

const NEWLINE = 0x0a

export interface ParsedSessionFile {
  header: SessionHeader
  events: SessionEvent[]
  /** Bytes that hold whole lines; shorter than the file only when a torn final line was dropped. */
  validLength: number
  /** The last line is whole (valid JSON) but lacks its newline. */
  unterminated: boolean
}

export function headerLine(header: SessionHeader): string {
  return `${JSON.stringify({ kind: SESSION_FILE_KIND, ...toFrozenJson(header) })}\n`
}

/** One line per event; rejects (`NOT_JSON`) data JSON cannot carry, so what is read equals what was appended. */
export function eventLine(event: SessionEvent): string {
  return `${JSON.stringify(toFrozenJson(event))}\n`
}

/**
 * Parses a whole session file; `file` names it in errors, `id` is the id its name carries. One pass
 * in file order, so the first bad line is the one reported.
 */
export function parseSessionFile(whole: Buffer, file: string, id: string, chunkBytes = DECODE_CHUNK_BYTES): ParsedSessionFile {
  // An editor may save a hand-edited log with a byte-order mark; JSON.parse would refuse the header for it.
  const bom = hasByteOrderMark(whole) ? BYTE_ORDER_MARK.length : 0
  const content = bom > 0 ? whole.subarray(bom) : whole
  const lastNewline = content.lastIndexOf(NEWLINE)
  const end = lastNewline + 1
  let validLength = end
  let unterminated = false
  let tail: unknown = TORN
  if (validLength < content.length) {
    tail = tryParse(decodeText(content, 'utf8', validLength, content.length, file))
    // A partial line is what a crash mid-write leaves; it was never acknowledged, so it is dropped.
    if (tail !== TORN) {
      validLength = content.length
      unterminated = true
    } else if (end === 0) {
      throw corrupt(file, 1, 'not a rein session file')
    }
  }
  let header: SessionHeader | undefined
  const events: SessionEvent[] = []
  let lineCount = 0
  // Each line parsed as its part of the file is decoded: only that part is ever held as text beside the bytes and the events.
  decodeLines(content, end, chunkBytes, file, (text) => {
    const line = ++lineCount
    if (line === 1) header = toHeader(parseLine(text, file, 1), file, id)
    else {
      const value = parseEventLine(text, file, line)
      if (value !== BLANK) events.push(toEvent(value, events.length, file, line))
    }
  })
  header ??= toHeader(tail, file, id)
  if (unterminated && lineCount > 0) events.push(toEvent(tail, events.length, file, lineCount + 1))
  return { header, events, validLength: bom + validLength, unterminated }
}

/** UTF-8's byte-order mark, which some editors write at the start of a file. */
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf])

export function hasByteOrderMark(content: Buffer): boolean {
  return content.length >= BYTE_ORDER_MARK.length && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf
}

/**
 * Logs are decoded this much at a time, cut after a newline, and each part's lines parsed before
 * the next is decoded: a resume held the whole log as text beside its bytes and its events (and V8
 * holds no string longer than about 512 MiB, so a long session's log decoded whole could never be
 * opened again).
 */
const DECODE_CHUNK_BYTES = 8 * 1024 * 1024

/** Each line of `content`'s first `end` bytes (which end with a newline, or are none), in order, to `take`. */
function decodeLines(content: Buffer, end: number, chunkBytes: number, file: string, take: (line: string) => void): void {
  // Below 0x80 Latin-1 and UTF-8 read bytes as the same characters, and copying a log as Latin-1
  // is several times faster than decoding it: a resume reads the whole file. The check covers the
  // torn tail too; one non-ASCII byte there only costs the slower decode.
  const encoding = isAscii(content) ? 'latin1' : 'utf8'
  for (let start = 0; start < end;) {
    // After the last newline within the chunk; a line longer than the chunk is decoded whole.
    const within = start + chunkBytes >= end ? end : content.lastIndexOf(NEWLINE, start + chunkBytes - 1) + 1
    const stop = within > start ? within : content.indexOf(NEWLINE, start) + 1
    const part = decodeText(content, encoding, start, stop, file).split('\n')
    part.pop() // the '' after the part's last newline
    for (const line of part) take(line)
    start = stop
  }
}

/** Bytes `start`…`stop` as text; `SESSION_TOO_LARGE` when they are more than one string can hold. */
function decodeText(content: Buffer, encoding: 'latin1' | 'utf8', start: number, stop: number, file: string): string {
  try {
    return content.toString(encoding, start, stop)
  } catch (error) {
    throw lineTooLong(file, stop - start, error)
  }
}

/** `SESSION_TOO_LARGE`: `bytes` without a line break, more than one string can hold. */
export function lineTooLong(file: string, bytes: number, cause?: unknown): ReinError {
  return new ReinError('SESSION_TOO_LARGE', `${file}: ${bytes} bytes without a line break between them, more than one string can hold; it cannot be loaded`, { ...(cause === undefined ? {} : { cause }), details: { file } })
}

const TORN = Symbol('torn')

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return TORN
  }
}

function parseLine(text: string, file: string, line: number): unknown {
  const value = tryParse(text)
  if (value === TORN) throw corrupt(file, line, line === 1 ? 'not a rein session file' : 'not valid JSON')
  return value
}

const BLANK = Symbol('blank')

/**
 * An event line's value, or BLANK for a line of spaces, tabs or a CR only: an editor may leave one
 * (an extra newline at the end), and it holds no event. Such lines must be read anywhere, not only
 * last: `open` appends after them. A torn write leaves no such line (its bytes are a prefix of
 * whole lines; a power cut's stale bytes are zeros, not blanks), so nothing torn is taken for blank.
 */
function parseEventLine(text: string, file: string, line: number): unknown {
  const value = tryParse(text)
  // Checked only once the parse failed: whole lines, nearly all of a log, pay nothing for it.
  if (value === TORN && BLANK_LINE.test(text)) return BLANK
  if (value === TORN) throw corrupt(file, line, 'not valid JSON')
  return value
}

/** Only what JSON itself counts as white space (a CR is what a CRLF line leaves). */
const BLANK_LINE = /^[ \t\r]*$/

/** The header line's value as a `SessionHeader` for session `id`, or why not (`SESSION_CORRUPT`, `SESSION_FORMAT_UNSUPPORTED`). */
export function toHeader(value: unknown, file: string, id: string): SessionHeader {
  if (!isRecord(value) || value.kind !== SESSION_FILE_KIND) throw corrupt(file, 1, 'not a rein session file')
  const { kind: _kind, ...header } = value
  if (!Number.isInteger(header.formatVersion)) throw corrupt(file, 1, 'the header lacks an integer "formatVersion"')
  if ((header.formatVersion as number) > SESSION_FORMAT_VERSION) {
    throw new ReinError('SESSION_FORMAT_UNSUPPORTED', `${file} uses session format ${String(header.formatVersion)}, newer than this rein reads (${SESSION_FORMAT_VERSION}); upgrade rein to read it`, {
      details: { file, formatVersion: header.formatVersion, supported: SESSION_FORMAT_VERSION },
    })
  }
  for (const key of ['id', 'createdAt', 'cwd'] as const) {
    if (typeof header[key] !== 'string') throw corrupt(file, 1, `the header lacks a string "${key}"`)
  }
  if (typeof header.depth !== 'number') throw corrupt(file, 1, 'the header lacks a numeric "depth"')
  if (header.id !== id) throw corrupt(file, 1, `the header names session ${JSON.stringify(header.id)}, not ${JSON.stringify(id)} as the file name does`, { headerId: header.id })
  // The fields a SessionHeader requires were checked above; any others are kept as written.
  return header as unknown as SessionHeader
}

/** An event line's value as the event of seq `expectedSeq`, or `SESSION_CORRUPT` naming the line. */
export function toEvent(value: unknown, expectedSeq: number, file: string, line: number): SessionEvent {
  if (!isRecord(value)) throw corrupt(file, line, 'an event must be a JSON object')
  if (!Number.isInteger(value.seq)) throw corrupt(file, line, 'the event lacks an integer "seq"')
  if (typeof value.type !== 'string' || value.type === '') throw corrupt(file, line, 'the event lacks a "type"')
  if (typeof value.time !== 'string') throw corrupt(file, line, 'the event lacks a "time"')
  if (!('data' in value)) throw corrupt(file, line, 'the event lacks "data"')
  if (value.seq !== expectedSeq) throw corrupt(file, line, `seq ${String(value.seq)} where ${expectedSeq} was expected`)
  // seq, type, time and data were checked above; data is whatever JSON was written.
  return value as unknown as SessionEvent
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function corrupt(file: string, line: number, problem: string, more: Record<string, unknown> = {}): ReinError {
  return new ReinError('SESSION_CORRUPT', `${file}:${line}: ${problem}; rein leaves the file as it is — repair it or move it out of the sessions folder`, { details: { file, line, ...more } })
}
