import { describe, expect, it } from 'vitest'
import { nearestPassages, type SearchWork } from '../src/nearest.ts'

/** A file of identical lines and an `old_string` of many such lines that differs only at its end: every window matches until its last line. */
function nearMisses(fileLines: number, oldLines: number) {
  return { text: 'x\n'.repeat(fileLines), wanted: `${'x\n'.repeat(oldLines)}x y` }
}

describe('the nearest passages of an old_string that is not in the file', () => {
  it('does bounded work on a large file of near misses, which used to freeze the event loop for seconds', () => {
    const { text, wanted } = nearMisses(100_000, 2_000)
    const work: SearchWork = { lineComparisons: 0, bigramSteps: 0 }
    nearestPassages(text, wanted, 3, work)
    // Without a bound this is about 100 000 × 2 000 = 2e8 line comparisons.
    expect(work.lineComparisons).toBeLessThanOrEqual(500_000)
  })

  it('does bounded work when a line of old_string is very long (a 200 KB line froze the event loop for 8 s)', () => {
    // Printable ASCII from a fixed pseudo-random sequence: thousands of distinct bigrams.
    let line = ''
    for (let seed = 1; line.length < 200_000;) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      line += String.fromCharCode(33 + (seed >> 16) % 94)
    }
    const work: SearchWork = { lineComparisons: 0, bigramSteps: 0 }
    nearestPassages('short line\n'.repeat(100_000), line, 3, work)
    expect(work.bigramSteps).toBeLessThanOrEqual(30_000_000)
    const long = nearestPassages(`a\n${line}!\nb\n`, line)
    expect(long.map((passage) => passage.startLine)).toEqual([2])
  })

  it('still finds a passage that differs only in whitespace in a small file', () => {
    const passages = nearestPassages('a\nif (x)  {\n  y()\n}\nb\n', 'if (x) {\n y()\n}')
    expect(passages).toEqual([{ startLine: 2, lines: ['if (x)  {', '  y()', '}'], whitespaceOnly: true }])
  })

  it('finds at most the passages it shows, however many windows match', () => {
    const work: SearchWork = { lineComparisons: 0, bigramSteps: 0 }
    const passages = nearestPassages('x  y\n'.repeat(50_000), 'x y\nx y', 3, work)
    expect(passages.map((p) => p.startLine)).toEqual([1, 2, 3])
    expect(work.lineComparisons).toBeLessThan(100)
  })
})
