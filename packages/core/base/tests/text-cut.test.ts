import { describe, expect, it } from 'vitest'
import { cutHead, cutTail, cutToBytes, shorten } from '../src/text-cut.ts'

describe('cutting text', () => {
  it('never splits a surrogate pair, at any length, from either end', () => {
    const text = 'a😀b𠀀c😀😀'
    for (let max = 0; max <= text.length + 1; max++) {
      for (const cut of [cutHead(text, max), cutTail(text, max), shorten(text, Math.max(1, max))]) {
        expect({ max, cut, wellFormed: cut.match(/\p{Cs}/u) === null }).toEqual({ max, cut, wellFormed: true })
        expect(cut.length).toBeLessThanOrEqual(Math.max(1, max))
      }
    }
  })

  it('cuts plain text exactly', () => {
    expect([cutHead('abcdef', 4), cutTail('abcdef', 4), shorten('abcdef', 4), shorten('abc', 4), cutTail('abc', 0)]).toEqual(['abcd', 'cdef', 'abc…', 'abc', ''])
  })

  it('cuts to a number of UTF-8 bytes between characters', () => {
    expect([cutToBytes('abc', 5), cutToBytes('記記記', 7), cutToBytes('a😀b', 4), cutToBytes('a😀b', 5)]).toEqual(['abc', '記記', 'a', 'a😀'])
  })
})
