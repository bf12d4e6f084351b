/**
 * The grep engine: a regular expression over files, each streamed in chunks, several files at a
 * time, results in path order, stopping once the cap is passed. The matching itself runs in the
 * matcher's worker thread, so no pattern can block the process. Binary files are counted and not
 * searched; non-regular files and files not really inside the allowed folder are skipped.
 */

import { open, type FileHandle } from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'
import { fsError } from './errors.ts'
import { BINARY_SNIFF_BYTES } from './line-window.ts'
import type { Matcher } from './matcher.ts'
import { READ_FLAGS, confirmInside } from './open-file.ts'
import { countNewlines, cutHead, cutTail } from '@rein/base'

/** One matching line: its number and its text, cut around the first match. */
interface LineMatch {
  line: number
  text: string
}

export interface SearchRequest {
  /** Runs the pattern; the caller closes it. */
  matcher: Matcher
  /** Absolute paths, in the order results should come. */
  files: readonly string[]
  /** The real folder every file must really be in (checked after opening); others are skipped. */
  allowed: string
  /** Stop after more than this many matching lines in all. */
  maxMatches: number
  lineChars: number
  /** A file as the model knows it, for messages. Default: the path as given. */
  display?: (file: string) => string
  signal?: AbortSignal
}

export interface SearchOutcome {
  /** Per file, in `files` order, only files with matches; at most `maxMatches` lines in all. */
  found: { file: string; matches: LineMatch[] }[]
  /** More matching lines exist than were kept. */
  truncated: boolean
  /** Text files opened and searched: not binary ones, nor those skipped as unreadable, not regular, or outside. */
  searched: number
  /** Files opened and found binary (a NUL byte in the first 8000), so not searched. */
  binary: number
}

const CHUNK = 64 * 1024
const PARALLEL = 8
/** A line longer than this is searched in its first part only; memory stays bounded. */
const MAX_LINE_CHARS = 1024 * 1024

/**
 * Compiles the model's pattern: JavaScript syntax, with leading inline flags (as ripgrep and most
 * engines write them) taken as flags: `(?i)` ignores case; `(?m)` and `(?s)` change nothing on one
 * line. Tries the `u` flag first for `\p{…}`.
 */
export function compilePattern(pattern: string): RegExp {
  const { source, insensitive } = inlineFlags(pattern)
  if (holdsLineBreak(source)) {
    throw fsError('INVALID_PATTERN', `pattern ${JSON.stringify(cutHead(pattern, 80))} holds a line break (\\n), but grep matches one line at a time, so it could never match; search for one of its lines, then read the file around the match`, { pattern })
  }
  const flags = insensitive ? 'i' : ''
  try {
    return new RegExp(source, `${flags}u`)
  } catch {
    try {
      return new RegExp(source, flags)
    } catch (error) {
      throw fsError('INVALID_PATTERN', `pattern is not a valid regular expression: ${(error as Error).message}`, { pattern }, error)
    }
  }
}

/** Inline flags at the start of a pattern: `i`, `m` and `s` are taken; any other is refused by name (JavaScript has no inline flags to pass it to). */
function inlineFlags(pattern: string): { source: string; insensitive: boolean } {
  const found = /^\(\?([a-zA-Z]+)\)/.exec(pattern)
  if (found === null) return { source: pattern, insensitive: false }
  const [group, letters = ''] = found
  if (/[^ims]/.test(letters)) {
    throw fsError('INVALID_PATTERN', `pattern starts with ${group}, inline flags grep cannot take: it understands (?i) to ignore case, and (?m) and (?s), which change nothing on one line; leave the others out`, { pattern })
  }
  return { source: pattern.slice(group.length), insensitive: letters.includes('i') }
}

/** Whether `source` asks for a line break outside a character class: typed as is, or as `\n`. Inside one (`[^\n]`) it is harmless. */
function holdsLineBreak(source: string): boolean {
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === '\\') {
      if (!inClass && source[i + 1] === 'n') return true
      i++
    } else if (char === '\n' && !inClass) return true
    else if (char === '[') inClass = true
    else if (char === ']') inClass = false
  }
  return false
}

export async function searchFiles(request: SearchRequest): Promise<SearchOutcome> {
  const results = Array.from<LineMatch[] | undefined>({ length: request.files.length })
  let next = 0
  let settled = 0
  let counted = 0
  let stop = false
  let searched = 0
  let binary = 0
  // The prefix of files whose results are in; once it holds more than the cap, later files cannot matter.
  const advance = () => {
    while (settled < results.length && results[settled] !== undefined) {
      counted += results[settled]?.length ?? 0
      settled++
      if (counted > request.maxMatches) stop = true
    }
  }
  const lane = async () => {
    while (!stop && next < request.files.length) {
      request.signal?.throwIfAborted()
      const index = next++
      const matches = await searchFile(request.files[index] ?? '', request)
      if (matches === BINARY) binary++
      else if (matches !== undefined) searched++
      results[index] = Array.isArray(matches) ? matches : []
      advance()
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, lane))
  request.signal?.throwIfAborted()
  const found: SearchOutcome['found'] = []
  let kept = 0
  let truncated = false
  for (const [index, matches] of results.entries()) {
    if (matches === undefined || matches.length === 0) continue
    const room = request.maxMatches - kept
    if (room <= 0 || matches.length > room) truncated = true
    if (room <= 0) break
    found.push({ file: request.files[index] ?? '', matches: matches.slice(0, room) })
    kept += Math.min(room, matches.length)
  }
  return { found, truncated: truncated || stop, searched, binary }
}

/** What `searchFile` gives for a binary file: it is not searched, but the model is told it was there. */
const BINARY = 'binary'

/**
 * Matching lines of one file, at most `maxMatches + 1`; `BINARY` for a binary file; `undefined`
 * when it was not searched: it could not be opened or read, is not a regular file, or is not really
 * inside `allowed` (a folder swapped for a link). The matcher's failure ends the whole search.
 */
async function searchFile(path: string, request: SearchRequest): Promise<LineMatch[] | typeof BINARY | undefined> {
  const handle = await open(path, READ_FLAGS).catch(() => undefined)
  if (handle === undefined) return undefined
  try {
    if (!(await handle.stat()).isFile()) return undefined
    await confirmInside(handle, request.allowed, path)
    return await matchLines(handle, path, request)
  } catch {
    // A cancel or the matcher's end (a timeout) stops the search; a file that fails is skipped.
    request.signal?.throwIfAborted()
    if (request.matcher.failure) throw request.matcher.failure
    return undefined
  } finally {
    await handle.close()
  }
}

async function matchLines(handle: FileHandle, path: string, request: SearchRequest): Promise<LineMatch[] | typeof BINARY> {
  const matches: LineMatch[] = []
  const decoder = new StringDecoder('utf8')
  const buffer = Buffer.allocUnsafe(CHUNK)
  const file = request.display?.(path) ?? path
  let carry = ''
  let line = 1
  let first = true
  // The line being read was cut at MAX_LINE_CHARS: its rest, up to its newline, is dropped, never
  // joined to the head kept (a match across the two would be text the file does not hold).
  let cut = false
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, null)
    if (bytesRead === 0) break
    if (first && buffer.subarray(0, Math.min(bytesRead, BINARY_SNIFF_BYTES)).includes(0)) return BINARY
    first = false
    let read = decoder.write(buffer.subarray(0, bytesRead))
    if (cut) {
      const newline = read.indexOf('\n')
      if (newline === -1) continue
      read = read.slice(newline)
      cut = false
    }
    const text = carry + read
    const end = text.lastIndexOf('\n')
    if (end === -1) {
      cut = text.length > MAX_LINE_CHARS
      carry = cut ? cutHead(text, MAX_LINE_CHARS) : text
      continue
    }
    line = await scan(text.slice(0, end), line, file, request, matches)
    if (matches.length > request.maxMatches) return matches
    carry = text.slice(end + 1)
  }
  const rest = carry + (cut ? '' : decoder.end())
  if (rest !== '') await scan(rest, line, file, request, matches)
  return matches
}

/** Adds the matching lines of `block` (whole lines, no trailing newline); returns the next line number. */
async function scan(block: string, line: number, file: string, request: SearchRequest, matches: LineMatch[]): Promise<number> {
  const hits = await request.matcher.match(block, request.maxMatches + 1 - matches.length, file)
  if (hits.length > 0) {
    const lines = block.split('\n')
    for (const [offset, index] of hits) {
      const raw = lines[offset] ?? ''
      matches.push({ line: line + offset, text: around(raw.endsWith('\r') ? raw.slice(0, -1) : raw, index, request.lineChars) })
    }
  }
  // The block's lines, a final newline starting one more (the next block's first).
  return line + countNewlines(block) + 1
}

/** The line, or `lineChars` of it starting a little before the match, marked where cut. */
function around(text: string, index: number, lineChars: number): string {
  if (text.length <= lineChars) return text
  const start = Math.max(0, Math.min(index - Math.floor(lineChars / 4), text.length - lineChars))
  // Units [start, start + lineChars), moved by one where an end would split a surrogate pair.
  const shown = cutTail(cutHead(text, start + lineChars), lineChars)
  return `${start > 0 ? '…' : ''}${shown}${start + lineChars < text.length ? '…' : ''}`
}
