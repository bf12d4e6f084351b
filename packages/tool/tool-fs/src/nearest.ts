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

/** Above this many line comparisons only the first and last lines of `old_string` are compared. */
const BUDGET = 400_000
const MIN_SCORE = 0.5

/** The work a search did, counted for tests. */
export interface SearchWork {
  lineComparisons: number
}

export function nearestPassages(text: string, wanted: string, max = 3, work: SearchWork = { lineComparisons: 0 }): Passage[] {
  const fileLines = text.split('\n').map(stripCr)
  const oldLines = wanted.split('\n').map(stripCr)
  if (oldLines.length > 1 && oldLines.at(-1) === '') oldLines.pop()
  const span = oldLines.length
  if (span > fileLines.length) return []
  const loose = whitespaceMatches(fileLines, oldLines, max, work)
  if (loose.length > 0) return loose.map((start) => passage(fileLines, start, span, true))
  return similarWindows(fileLines, oldLines).slice(0, max).map((start) => passage(fileLines, start, span, false))
}

function passage(fileLines: string[], start: number, span: number, whitespaceOnly: boolean): Passage {
  return { startLine: start + 1, lines: fileLines.slice(start, start + span), whitespaceOnly }
}

const squash = (line: string) => line.trim().replace(/\s+/g, ' ')

/**
 * Up to `max` windows equal to the old lines with whitespace squashed; the first and last old lines
 * may be partial. A file of near misses (every window matching until its last line) would take
 * file lines × old lines comparisons on the event loop: past `BUDGET × 2` the search stops with
 * what it found, and the error shows no passage rather than freezing the process.
 */
function whitespaceMatches(fileLines: string[], oldLines: string[], max: number, work: SearchWork): number[] {
  const old = oldLines.map(squash)
  if (old.every((line) => line === '')) return []
  const file = fileLines.map(squash)
  const found: number[] = []
  const stopAt = work.lineComparisons + BUDGET * 2
  for (let start = 0; start + old.length <= file.length && found.length < max && work.lineComparisons < stopAt; start++) {
    if (windowFits(file, old, start, work)) found.push(start)
  }
  return found
}

function windowFits(file: string[], old: string[], start: number, work: SearchWork): boolean {
  for (let j = 0; j < old.length; j++) {
    work.lineComparisons++
    if (!fits(file[start + j] ?? '', old[j] ?? '', j, old.length)) return false
  }
  return true
}

function fits(fileLine: string, oldLine: string, index: number, span: number): boolean {
  if (span === 1) return fileLine.includes(oldLine)
  if (index === 0) return fileLine.endsWith(oldLine)
  if (index === span - 1) return fileLine.startsWith(oldLine)
  return fileLine === oldLine
}

/** Window starts by mean bigram similarity, best first, not overlapping, above `MIN_SCORE`. */
function similarWindows(fileLines: string[], oldLines: string[]): number[] {
  const span = oldLines.length
  const endsOnly = fileLines.length * span > BUDGET && span > 2
  const compared = oldLines
    .map((line, offset) => ({ offset, grams: bigrams(line.trim()) }))
    .filter(({ offset }) => !endsOnly || offset === 0 || offset === span - 1)
  const fileGrams = new Map<number, Map<string, number>>()
  const gramsAt = (index: number) => {
    let grams = fileGrams.get(index)
    if (!grams) fileGrams.set(index, grams = bigrams((fileLines[index] ?? '').trim()))
    return grams
  }
  const scored: { start: number; score: number }[] = []
  for (let start = 0; start + span <= fileLines.length; start++) {
    let total = 0
    for (const { offset, grams } of compared) total += dice(grams, gramsAt(start + offset))
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

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.slice(i, i + 2)
    grams.set(gram, (grams.get(gram) ?? 0) + 1)
  }
  return grams
}

/** Sørensen–Dice over bigram multisets: 1 for equal texts, 0 for nothing in common. */
function dice(a: Map<string, number>, b: Map<string, number>): number {
  let sizeA = 0
  let sizeB = 0
  let shared = 0
  for (const count of a.values()) sizeA += count
  for (const count of b.values()) sizeB += count
  if (sizeA === 0 && sizeB === 0) return 1
  if (sizeA === 0 || sizeB === 0) return 0
  for (const [gram, count] of a) shared += Math.min(count, b.get(gram) ?? 0)
  return (2 * shared) / (sizeA + sizeB)
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line
}
