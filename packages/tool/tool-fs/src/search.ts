/**
 * The grep engine: a regular expression over files, each streamed in chunks (a chunk without a
 * match is skipped whole), several files at a time, results in path order, stopping once the cap
 * is passed. Binary files and non-regular files are skipped.
 */

import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'
import { fsError } from './errors.ts'
import { BINARY_SNIFF_BYTES } from './line-window.ts'
import { confirmInside } from './open-file.ts'

/** One matching line: its number and its text, cut around the first match. */
interface LineMatch {
  line: number
  text: string
}

export interface SearchRequest {
  regex: RegExp
  /** Absolute paths, in the order results should come. */
  files: readonly string[]
  /** The real folder every file must really be in (checked after opening); others are skipped. */
  allowed: string
  /** Stop after more than this many matching lines in all. */
  maxMatches: number
  lineChars: number
  signal?: AbortSignal
}

export interface SearchOutcome {
  /** Per file, in `files` order, only files with matches; at most `maxMatches` lines in all. */
  found: { file: string; matches: LineMatch[] }[]
  /** More matching lines exist than were kept. */
  truncated: boolean
  /** Files actually read (binary and unreadable ones included). */
  searched: number
}

const CHUNK = 64 * 1024
const PARALLEL = 8
/** A line longer than this is searched in its first part only; memory stays bounded. */
const MAX_LINE_CHARS = 1024 * 1024

/**
 * Compiles the model's pattern: JavaScript syntax, with a leading `(?i)` (as ripgrep and most
 * engines write it) turned into the `i` flag. Tries the `u` flag first for `\p{…}`.
 */
export function compilePattern(pattern: string): RegExp {
  const insensitive = pattern.startsWith('(?i)')
  const source = insensitive ? pattern.slice(4) : pattern
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

export async function searchFiles(request: SearchRequest): Promise<SearchOutcome> {
  const results = Array.from<LineMatch[] | undefined>({ length: request.files.length })
  let next = 0
  let settled = 0
  let counted = 0
  let stop = false
  let searched = 0
  // The prefix of files whose results are in; once it holds more than the cap, later files cannot matter.
  const advance = () => {
    while (settled < results.length && results[settled] !== undefined) {
      counted += results[settled]?.length ?? 0
      settled++
      if (counted > request.maxMatches) stop = true
    }
  }
  const worker = async () => {
    while (!stop && next < request.files.length) {
      request.signal?.throwIfAborted()
      const index = next++
      const file = request.files[index] ?? ''
      searched++
      results[index] = await searchFile(file, request).catch(() => [])
      advance()
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
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
  return { found, truncated: truncated || stop, searched }
}

/** Matching lines of one file, at most `maxMatches + 1`; `[]` for a binary or non-regular file. */
async function searchFile(path: string, request: SearchRequest): Promise<LineMatch[]> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    if (!(await handle.stat()).isFile()) return []
    await confirmInside(handle, request.allowed, path)
    const matches: LineMatch[] = []
    const decoder = new StringDecoder('utf8')
    const buffer = Buffer.allocUnsafe(CHUNK)
    const probe = new RegExp(request.regex.source, `${request.regex.flags}m`)
    let carry = ''
    let line = 1
    let first = true
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null)
      if (bytesRead === 0) break
      if (first && buffer.subarray(0, Math.min(bytesRead, BINARY_SNIFF_BYTES)).includes(0)) return []
      first = false
      const text = carry + decoder.write(buffer.subarray(0, bytesRead))
      const end = text.lastIndexOf('\n')
      if (end === -1) {
        carry = text.length > MAX_LINE_CHARS ? text.slice(0, MAX_LINE_CHARS) : text
        continue
      }
      line = scan(text.slice(0, end), line, probe, request, matches)
      if (matches.length > request.maxMatches) return matches
      carry = text.slice(end + 1)
    }
    const rest = carry + decoder.end()
    if (rest !== '') scan(rest, line, probe, request, matches)
    return matches
  } finally {
    await handle.close()
  }
}

/** Adds the matching lines of `block` (whole lines, no trailing newline); returns the next line number. */
function scan(block: string, line: number, probe: RegExp, request: SearchRequest, matches: LineMatch[]): number {
  const lines = block.split('\n')
  // Most blocks hold no match: one test over the whole block skips them. A look-around could see
  // across a line break there and miss what a single line matches, so such patterns skip this.
  if (!lookAround(request.regex) && !probe.test(block.includes('\r') ? block.replace(/\r$/gm, '') : block)) return line + lines.length
  for (const [i, raw] of lines.entries()) {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const found = request.regex.exec(text)
    if (found === null) continue
    matches.push({ line: line + i, text: around(text, found.index, request.lineChars) })
    if (matches.length > request.maxMatches) break
  }
  return line + lines.length
}

function lookAround(regex: RegExp): boolean {
  return /\(\?<?[=!]/.test(regex.source)
}

/** The line, or `lineChars` of it starting a little before the match, marked where cut. */
function around(text: string, index: number, lineChars: number): string {
  if (text.length <= lineChars) return text
  const start = Math.max(0, Math.min(index - Math.floor(lineChars / 4), text.length - lineChars))
  return `${start > 0 ? '…' : ''}${text.slice(start, start + lineChars)}${start + lineChars < text.length ? '…' : ''}`
}
