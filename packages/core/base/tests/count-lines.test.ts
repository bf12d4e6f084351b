import { describe, expect, it } from 'vitest'
import { countLines, countNewlines } from '../src/index.ts'

describe('countLines and countNewlines', () => {
  it('counts lines as a reader does and newlines as they are: a final newline ends a line, it starts none', () => {
    const texts = ['', 'a', 'a\n', 'a\nb', '\n\n', 'seq\n'.repeat(800)]
    expect(texts.map(countLines)).toEqual([0, 1, 1, 2, 2, 800])
    expect(texts.map(countNewlines)).toEqual([0, 0, 1, 1, 2, 800])
  })
})
