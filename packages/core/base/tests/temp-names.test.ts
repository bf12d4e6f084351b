import { describe, expect, it } from 'vitest'
import { TEMP_TAIL_MAX_BYTES, tempStem, withSuffix } from '../src/temp-names.ts'

describe('tempStem', () => {
  it('keeps a short name whole', () => {
    expect(tempStem('a.txt')).toBe('.a.txt.')
  })

  it('leaves room for the tail under any 255-byte name, cut at a character, and tells long names apart', () => {
    for (const name of ['x'.repeat(255), '記'.repeat(85), `${'é'.repeat(100)}😀`, `${'a'.repeat(188)}b`]) {
      const stem = tempStem(name)
      expect(Buffer.byteLength(stem) + TEMP_TAIL_MAX_BYTES).toBeLessThanOrEqual(255)
      expect(stem).not.toContain('\uFFFD')
      expect(Buffer.from(stem).toString('utf8')).toBe(stem)
    }
    expect(tempStem(`${'記'.repeat(84)}a`)).not.toBe(tempStem(`${'記'.repeat(84)}b`))
    expect(tempStem('記'.repeat(85))).toBe(tempStem('記'.repeat(85)))
  })

  it('adds a suffix within the 255-byte limit, cutting the name only when it must', () => {
    expect(withSuffix('notes.txt', '.1')).toBe('notes.txt.1')
    const long = withSuffix('記'.repeat(85), '.12')
    expect([Buffer.byteLength(long) <= 255, long.endsWith('.12'), long.startsWith('記'.repeat(84))]).toEqual([true, true, true])
  })
})
