/**
 * When `old_string` is not in a file: the passages nearest to it, so the error can show the model
 * what the file really says. First a match that differs only in whitespace, else the windows of
 * lines most alike by character bigrams.
 */

/** A passage of the file: its first line's number and its lines. */
export interface Passage {
  startLine: number
  lines: string[]
  /** It equals `old_string` once whitespace is ignored. */
  whitespaceOnly: boolean
}

/**
 * Most line comparisons each search makes: a few hundred ms of the event loop at most, in a file of
 * hundreds of thousands of lines. Above this many, the similarity search compares only the first
 * and last lines of `old_string`.
 */
const BUDGET = 100_000
const MIN_SCORE = 0.5

/** The work a search did, counted for tests. */
export interface SearchWork {
  lineComparisons: number
  /** Bigrams looked up while scoring similarity. */
  bigramSteps: number
}

export function nearestPassages(text: string, wanted: string, max = 3, work: SearchWork = { lineComparisons: 0, bigramSteps: 0 }): Passage[] {
  const fileLines = new FileLines(text)
  const oldLines = wanted.split('\n').map(stripCr)
  if (oldLines.length > 1 && oldLines.at(-1) === '') oldLines.pop()
  const span = oldLines.length
  const loose = whitespaceMatches(fileLines, oldLines, max, work)
  if (loose.length > 0) return loose.map((start) => passage(fileLines, start, span, true))
  return similarWindows(fileLines, oldLines, work).slice(0, max).map((start) => passage(fileLines, start, span, false))
}

/**
 * The file's lines (without their CRs), split and squashed only as far as a search reaches: both
 * searches stop within their budget, so a file of millions of lines is never split whole.
 */
class FileLines {
  private readonly lines: string[] = []
  private readonly squashed: string[] = []
  private next = 0

  constructor(private readonly text: string) {}

  /** Line `index` (from 0), or undefined past the last. */
  at(index: number): string | undefined {
    while (this.lines.length <= index && this.next <= this.text.length) {
      const end = this.text.indexOf('\n', this.next)
      const stop = end === -1 ? this.text.length : end
      this.lines.push(stripCr(this.text.slice(this.next, stop)))
      this.next = stop + 1
    }
    return this.lines[index]
  }

  /** Line `index` with its whitespace squashed, for the whitespace-insensitive search. */
  squashedAt(index: number): string | undefined {
    const line = this.at(index)
    if (line === undefined) return undefined
    return this.squashed[index] ??= squash(line)
  }

  /** Whether the window of `span` lines from `start` lies inside the file. */
  holds(start: number, span: number): boolean {
    return this.at(start + span - 1) !== undefined
  }
}

function passage(fileLines: FileLines, start: number, span: number, whitespaceOnly: boolean): Passage {
  const lines: string[] = []
  for (let index = start; index < start + span; index++) lines.push(fileLines.at(index) ?? '')
  return { startLine: start + 1, lines, whitespaceOnly }
}

const squash = (line: string) => line.trim().replace(/\s+/g, ' ')

/**
 * Up to `max` windows equal to the old lines with whitespace squashed; the first and last old lines
 * may be partial. A file of near misses (every window matching until its last line) would take
 * file lines × old lines comparisons on the event loop: past `BUDGET` comparisons the search stops with
 * what it found, and the error shows no passage rather than freezing the process.
 */
function whitespaceMatches(fileLines: FileLines, oldLines: string[], max: number, work: SearchWork): number[] {
  const old = oldLines.map(squash)
  if (old.every((line) => line === '')) return []
  const found: number[] = []
  const stopAt = work.lineComparisons + BUDGET
  for (let start = 0; fileLines.holds(start, old.length) && found.length < max && work.lineComparisons < stopAt; start++) {
    if (windowFits(fileLines, old, start, work)) found.push(start)
  }
  return found
}

function windowFits(fileLines: FileLines, old: string[], start: number, work: SearchWork): boolean {
  for (let j = 0; j < old.length; j++) {
    work.lineComparisons++
    if (!fits(fileLines.squashedAt(start + j) ?? '', old[j] ?? '', j, old.length)) return false
  }
  return true
}

function fits(fileLine: string, oldLine: string, index: number, span: number): boolean {
  if (span === 1) return fileLine.includes(oldLine)
  if (index === 0) return fileLine.endsWith(oldLine)
  if (index === span - 1) return fileLine.startsWith(oldLine)
  return fileLine === oldLine
}

/**
 * Window starts by mean bigram similarity, best first, not overlapping, above `MIN_SCORE`. Like the
 * whitespace search, it stops after `BUDGET` line comparisons: in a file of millions of lines
 * only the windows from its start are scored.
 */
function similarWindows(fileLines: FileLines, oldLines: string[], work: SearchWork): number[] {
  const span = oldLines.length
  // More than BUDGET / span lines: comparing every old line would pass the budget.
  const endsOnly = span > 2 && fileLines.at(Math.floor(BUDGET / span)) !== undefined
  const compared = oldLines
    .map((line, offset) => ({ offset, grams: bigrams(line.trim()) }))
    .filter(({ offset }) => !endsOnly || offset === 0 || offset === span - 1)
  const fileGrams = new Map<number, Bigrams>()
  const gramsAt = (index: number) => {
    let grams = fileGrams.get(index)
    if (!grams) fileGrams.set(index, grams = bigrams((fileLines.at(index) ?? '').trim()))
    return grams
  }
  const scored: { start: number; score: number }[] = []
  const stopAt = work.lineComparisons + BUDGET
  for (let start = 0; fileLines.holds(start, span) && work.lineComparisons < stopAt; start++) {
    work.lineComparisons += compared.length
    let total = 0
    for (const { offset, grams } of compared) total += dice(grams, gramsAt(start + offset), work)
    const score = total / compared.length
    if (score >= MIN_SCORE) scored.push({ start, score })
  }
  scored.sort((a, b) => b.score - a.score || a.start - b.start)
  const chosen: number[] = []
  for (const { start } of scored) {
    if (chosen.every((other) => Math.abs(other - start) >= span)) chosen.push(start)
    if (chosen.length === 3) break
  }
  return chosen
}

/** A line's character bigrams, each counted, keyed by its two UTF-16 units as one number (no string per bigram). */
interface Bigrams {
  counts: Map<number, number>
  size: number
}

/** Characters of a line that similarity scores: enough to tell passages apart, and a very long line costs no more. */
const SCORED_CHARS = 256

function bigrams(line: string): Bigrams {
  const text = line.length > SCORED_CHARS ? line.slice(0, SCORED_CHARS) : line
  const counts = new Map<number, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.charCodeAt(i) * 0x10000 + text.charCodeAt(i + 1)
    counts.set(gram, (counts.get(gram) ?? 0) + 1)
  }
  return { counts, size: Math.max(0, text.length - 1) }
}

/** Sørensen–Dice over bigram multisets: 1 for equal texts, 0 for nothing in common. Walks the smaller set. */
function dice(a: Bigrams, b: Bigrams, work: SearchWork): number {
  if (a.size === 0 && b.size === 0) return 1
  if (a.size === 0 || b.size === 0) return 0
  const [fewer, more] = a.counts.size <= b.counts.size ? [a.counts, b.counts] : [b.counts, a.counts]
  let shared = 0
  for (const [gram, count] of fewer) shared += Math.min(count, more.get(gram) ?? 0)
  work.bigramSteps += fewer.size
  return (2 * shared) / (a.size + b.size)
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}
