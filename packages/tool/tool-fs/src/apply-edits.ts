/**
 * Applies `old_string` → `new_string` edits to a text in memory, in order, all or nothing. A miss
 * shows the nearest passages; an ambiguous match names every line it matches.
 */

import { fsError } from './errors.ts'
import { nearestPassages, type Passage } from './nearest.ts'
import { cutHead } from '@rein/base'

/** One replacement, as the model writes it. */
export interface Edit {
  readonly old_string: string
  readonly new_string: string
  readonly replace_all?: boolean
}

const SHOWN_LINE_CHARS = 160
const SHOWN_LINES = 8
const LISTED_MATCHES = 10

/** Where an edit's old_string is in the text: offset and length (a \n may have matched a \r\n). */
interface Match {
  readonly at: number
  readonly length: number
}

/** The edited text and how many places changed. Throws `EDIT_*` naming the edit that failed. */
export function applyEdits(text: string, edits: readonly Edit[], display: string): { text: string; replacements: number } {
  let current = text
  let replacements = 0
  edits.forEach((edit, index) => {
    const where = edits.length > 1 ? `edit ${index + 1} of ${edits.length}: ` : ''
    const after = edits.length > 1 ? ' No edit was applied; the file is unchanged.' : ''
    if (edit.old_string === edit.new_string) {
      throw fsError('EDIT_NO_CHANGE', `${where}old_string and new_string are the same, so there is nothing to change.${after}`, { path: display, edit: index })
    }
    // Overlapping places count: "aba" in "ababa" is two, and which one was meant is unknown.
    const found = matches(current, edit.old_string, true)
    if (found.length === 0) {
      throw fsError('EDIT_NOT_FOUND', `${where}${notFound(current, edit.old_string, display)}${after}`, { path: display, edit: index })
    }
    if (found.length > 1 && edit.replace_all !== true) {
      throw fsError('EDIT_AMBIGUOUS', `${where}${ambiguous(current, found.map((match) => match.at), display)}${after}`, { path: display, edit: index, matches: found.length })
    }
    const targets = edit.replace_all === true ? matches(current, edit.old_string, false) : found
    current = replaced(current, targets, edit.old_string, edit.new_string)
    replacements += targets.length
  })
  if (current === text) {
    throw fsError('EDIT_NO_CHANGE', `the edits leave ${display} exactly as it was; nothing was written`, { path: display })
  }
  return { text: current, replacements }
}

/**
 * Where `wanted` is, left to right. `read` shows lines without their \r, so a \n the model typed
 * (with no \r anywhere in it) matches a \r\n too: CRLF files, and the CRLF lines of mixed ones.
 */
function matches(text: string, wanted: string, overlapping: boolean): Match[] {
  const found: Match[] = []
  if (wanted === '') return found
  // Searched in the text with those \r's left out, each hit mapped back: a regular expression of a
  // group per line overflows the stack past some thousands of lines. With a \r typed, or on one
  // line, `wanted` is searched as written.
  const literal = wanted.includes('\r') || !wanted.includes('\n')
  const { plain, dropped } = literal ? { plain: text, dropped: [] } : withoutCarriageReturns(text)
  const original = (at: number) => at + countBelow(dropped, at)
  for (let at = plain.indexOf(wanted); at !== -1; at = plain.indexOf(wanted, at + (overlapping ? 1 : wanted.length))) {
    const start = original(at)
    found.push({ at: start, length: original(at + wanted.length) - start })
  }
  return found
}

/** `text` without the \r of each \r\n, and where those \n are in it (ascending). */
function withoutCarriageReturns(text: string): { plain: string; dropped: number[] } {
  const dropped: number[] = []
  let plain = ''
  let from = 0
  for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) {
    plain += text.slice(from, at)
    dropped.push(plain.length)
    from = at + 1
  }
  return { plain: plain + text.slice(from), dropped }
}

/** How many of the ascending `values` are below `limit`: a \r before the \n at a match's start belongs to the match. */
function countBelow(values: readonly number[], limit: number): number {
  let low = 0
  let high = values.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (values[middle]! < limit) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * `text` with each (non-overlapping, in order) match replaced. A plain \n in `replacement` is
 * written as the line break in use where it goes; typed with its \r (`wanted` holding one too),
 * it is taken as written, so a model may change a file's line ends on purpose.
 */
function replaced(text: string, targets: readonly Match[], wanted: string, replacement: string): string {
  const literal = wanted.includes('\r') || replacement.includes('\r') || !replacement.includes('\n')
  const crlf = replacement.replaceAll('\n', '\r\n')
  const breaks = literal ? undefined : new Breaks(text)
  let out = ''
  let from = 0
  for (const { at, length } of targets) {
    out += text.slice(from, at) + (breaks?.crlfAt(at) === true ? crlf : replacement)
    from = at + length
  }
  return out + text.slice(from)
}

/**
 * Which line break a place uses: the match's own, else the one ending its line, else the file's
 * usual one. Targets come in order, so the newline after the last one is remembered: a replace_all
 * over a long line does not scan it once per match.
 */
class Breaks {
  private next = -1
  private usual: boolean | undefined

  constructor(private readonly text: string) {}

  /** The first newline at or after `at` is the match's own break if it holds one, else the one ending its line. */
  crlfAt(at: number): boolean {
    if (this.next < at) {
      const found = this.text.indexOf('\n', at)
      this.next = found === -1 ? this.text.length : found
    }
    return this.next < this.text.length ? this.text[this.next - 1] === '\r' : this.fileUsual()
  }

  private fileUsual(): boolean {
    return (this.usual ??= usesCrlf(this.text))
  }
}

function usesCrlf(text: string): boolean {
  const crlf = text.split('\r\n').length - 1
  return crlf > 0 && crlf >= text.split('\n').length - 1 - crlf
}

function notFound(text: string, wanted: string, display: string): string {
  const numbered = numberedMatch(text, wanted)
  if (numbered !== undefined) {
    return `old_string was not found in ${display}: each of its lines starts with a line number and a tab, as read shows them, but those are not part of the file. Without them it matches ${numbered}; send old_string (and new_string) without the numbers.`
  }
  const composed = composedMatch(text, wanted)
  if (composed !== undefined) {
    return `old_string was not found in ${display}; it matches ${composed} only if its accented letters are composed alike: one side writes some as a letter plus a combining mark (Unicode NFD), the other as one character (NFC), which look the same. Keep old_string to the text around them, or write the line anew.`
  }
  const passages = nearestPassages(text, wanted)
  const advice = 'Copy the text exactly as read shows it (indentation included, without the line-number prefix), or read the file again.'
  if (passages.length === 0) return `old_string was not found in ${display}, and no passage resembles it; read the file to see its current text.`
  const first = passages[0]
  if (first?.whitespaceOnly) {
    const places = passages.map(span).join(', ')
    return `old_string was not found in ${display}; it matches ${places} only if whitespace is ignored (indentation, spaces or line breaks differ):\n${passages.map(show).join('\n\n')}\n${advice}`
  }
  return `old_string was not found in ${display}. The most similar passages:\n${passages.map((passage) => `${span(passage)}:\n${show(passage)}`).join('\n\n')}\n${advice}`
}

/** read's prefix of a line (`12<tab>`), or `cat -n`'s padded one. */
const LINE_NUMBER = /^ *\d+\t/

/**
 * When every line of `wanted` starts with a line number and a tab (copied from read's output with
 * them) and it matches without them: where (`line 3`, `lines 3-4`). Undefined otherwise: a file
 * whose own lines start so (a numbered table) may simply not hold it, and its similar passages say more.
 */
function numberedMatch(text: string, wanted: string): string | undefined {
  const lines = wanted.split('\n')
  if (lines.length > 1 && lines.at(-1) === '') lines.pop()
  if (!lines.every((line) => LINE_NUMBER.test(line))) return undefined
  const bare = lines.map((line) => line.replace(LINE_NUMBER, '')).join('\n')
  const [found] = matches(text, bare, false)
  if (found === undefined) return undefined
  const [first = 1] = lineNumbers(text, [found.at])
  const last = first + lines.length - 1
  return first === last ? `line ${first}` : `lines ${first}-${last}`
}

/** Where `wanted` matches once both are composed alike (NFC), as `line 3` or `lines 3-4`; undefined when it does not. */
function composedMatch(text: string, wanted: string): string | undefined {
  const composed = text.normalize('NFC')
  const at = composed.indexOf(wanted.normalize('NFC'))
  if (at < 0) return undefined
  // Composing changes no line break, so line numbers are the file's.
  const first = composed.slice(0, at).split('\n').length
  const last = first + wanted.split('\n').length - 1
  return first === last ? `line ${first}` : `lines ${first}-${last}`
}

function ambiguous(text: string, found: number[], display: string): string {
  const lines = lineNumbers(text, found)
  const listed = lines.slice(0, LISTED_MATCHES).join(', ')
  const more = lines.length > LISTED_MATCHES ? ` and ${lines.length - LISTED_MATCHES} more` : ''
  return `old_string matches ${found.length} places in ${display} (at lines ${listed}${more}). Include more of the surrounding lines so it matches one place only, or set replace_all to true to change every one.`
}

/** 1-based line numbers of each offset, in one pass. */
function lineNumbers(text: string, offsets: number[]): number[] {
  const numbers: number[] = []
  let line = 1
  let position = 0
  for (const offset of offsets) {
    for (let at = text.indexOf('\n', position); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
      line++
      position = at + 1
    }
    numbers.push(line)
  }
  return numbers
}

function span(passage: Passage): string {
  const end = passage.startLine + passage.lines.length - 1
  return end === passage.startLine ? `line ${passage.startLine}` : `lines ${passage.startLine}-${end}`
}

function show(passage: Passage): string {
  const lines = passage.lines.slice(0, SHOWN_LINES).map((line, i) => {
    const cut = line.length > SHOWN_LINE_CHARS ? `${cutHead(line, SHOWN_LINE_CHARS)} … [line cut]` : line
    return `${passage.startLine + i}\t${cut}`
  })
  if (passage.lines.length > SHOWN_LINES) lines.push(`[… ${passage.lines.length - SHOWN_LINES} more lines]`)
  return lines.join('\n')
}
