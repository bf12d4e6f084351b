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

export function nearestPassages(text: string, wanted: string, max = 3): Passage[] {
  const fileLines = text.split('\n').map(stripCr)
  const oldLines = wanted.split('\n').map(stripCr)
  if (oldLines.length > 1 && oldLines.at(-1) === '') oldLines.pop()
  const span = oldLines.length
  if (span > fileLines.length) return []
  const loose = whitespaceMatches(fileLines, oldLines)
  if (loose.length > 0) return loose.slice(0, max).map((start) => passage(fileLines, start, span, true))
  return similarWindows(fileLines, oldLines).slice(0, max).map((start) => passage(fileLines, start, span, false))
}

function passage(fileLines: string[], start: number, span: number, whitespaceOnly: boolean): Passage {
  return { startLine: start + 1, lines: fileLines.slice(start, start + span), whitespaceOnly }
}

const squash = (line: string) => line.trim().replace(/\s+/g, ' ')

/** Windows equal to the old lines with whitespace squashed; the first and last old lines may be partial. */
function whitespaceMatches(fileLines: string[], oldLines: string[]): number[] {
  const old = oldLines.map(squash)
  if (old.every((line) => line === '')) return []
  const file = fileLines.map(squash)
  const found: number[] = []
  for (let start = 0; start + old.length <= file.length; start++) {
    if (old.every((line, j) => fits(file[start + j] ?? '', line, j, old.length))) found.push(start)
  }
  return found
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
