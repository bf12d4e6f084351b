// The streaming keeper against @rein/tools' `excerpt` over the whole text: the same head and
// tail for any text, any limits and any way of cutting the text into chunks (seeded, repeatable).
import { describe, expect, it } from 'vitest'
import { countLines } from '@rein/base'
import { excerpt, SpillKeeper } from '../src/index.ts'

/** Half of a surrogate pair, alone: text no provider should be sent. */
const LONE_SURROGATE = /\p{Cs}/u

/** mulberry32: a small seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'.split('')

/** Lines of mixed lengths: empty ones, short ones, and now and then one longer than any limit. */
/** `letters` one character each (an emoji is one), so lines are cut between characters. */
function text(next: () => number, letters: readonly string[] = LETTERS): string {
  const lines: string[] = []
  const count = Math.floor(next() * 400)
  for (let i = 0; i < count; i++) {
    const roll = next()
    const length = roll < 0.1 ? 0 : roll < 0.95 ? Math.floor(next() * 40) : Math.floor(next() * 3000)
    const from = Math.floor(next() * 26)
    lines.push(Array.from({ length }, (_, i) => letters[(from + i) % letters.length]).join(''))
  }
  return lines.join('\n') + (next() < 0.5 ? '\n' : '')
}

function chunks(whole: string, next: () => number): string[] {
  const parts: string[] = []
  for (let at = 0; at < whole.length;) {
    const size = next() < 0.2 ? 1 : Math.ceil(next() * 700)
    parts.push(whole.slice(at, at + size))
    at += size
  }
  return parts
}

describe('SpillKeeper', () => {
  it('gives exactly what excerpt gives on the whole text, for 3000 seeded cases', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed)
      const whole = text(next)
      const limits = { chars: 4 + Math.floor(next() * 4000), lines: 1 + Math.floor(next() * 200) }
      const keeper = new SpillKeeper(limits)
      for (const part of chunks(whole, next)) keeper.append(part)
      // The seed and limits in the comparison name the case when it fails.
      expect({ seed, limits, got: keeper.excerpt() }).toEqual({ seed, limits, got: excerpt(whole, limits) })
      expect(keeper.long).toBe(whole.length > limits.chars || countLines(whole) > limits.lines)
    }
    // 3000 cases take about 5 s on a loaded 2-core machine: more than vitest's default allows.
  }, 30_000)

  it('never splits a surrogate pair where it cuts a line (emoji, CJK extension B), and still agrees with excerpt', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const next = random(seed)
      const whole = text(next, ['a', '😀', 'b', '𠀀', 'c'])
      expect(whole.match(LONE_SURROGATE) === null).toBe(true)
      const limits = { chars: 1 + Math.floor(next() * 400), lines: 1 + Math.floor(next() * 40) }
      const keeper = new SpillKeeper(limits)
      for (const part of chunks(whole, next)) keeper.append(part)
      const shown = excerpt(whole, limits)
      expect({ seed, limits, got: keeper.excerpt() }).toEqual({ seed, limits, got: shown })
      expect({ seed, limits, head: shown.head.match(LONE_SURROGATE) === null, tail: shown.tail.match(LONE_SURROGATE) === null }).toEqual({ seed, limits, head: true, tail: true })
    }
  })

  it('counts 800 lines that end in a newline as 800, not 801, and does not call them long at an 800-line limit', () => {
    const seq = Array.from({ length: 800 }, (_, i) => `${i + 1}\n`).join('')
    const limits = { chars: 1_000_000, lines: 800 }
    const keeper = new SpillKeeper(limits)
    keeper.append(seq)
    expect({ lines: keeper.lines, long: keeper.long, total: keeper.excerpt().totalLines }).toEqual({ lines: 800, long: false, total: 800 })
    expect(excerpt(seq, limits).totalLines).toBe(800)
    const longer = excerpt(`${seq}801\n`, { chars: 1_000_000, lines: 8 })
    // The last line is 801, not an empty one after its newline.
    expect({ total: longer.totalLines, tail: longer.tail }).toEqual({ total: 801, tail: '800\n801' })
  })

  it('counts no lines in no text', () => {
    expect({ keeper: new SpillKeeper({ chars: 10, lines: 4 }).lines, excerpt: excerpt('', { chars: 10, lines: 4 }).totalLines }).toEqual({ keeper: 0, excerpt: 0 })
  })

  it('cuts a single endless line to a head and a tail of its end, as excerpt does', () => {
    const keeper = new SpillKeeper({ chars: 100, lines: 10 })
    for (let i = 0; i < 1000; i++) keeper.append('y'.repeat(1000))
    keeper.append(' the end')
    const whole = `${'y'.repeat(1_000_000)} the end`
    expect(keeper.excerpt()).toEqual({ head: 'y'.repeat(50), headLines: 1, tail: `${'y'.repeat(17)} the end`, tailLines: 0, totalChars: 1_000_008, totalLines: 1 })
    expect(keeper.excerpt()).toEqual(excerpt(whole, { chars: 100, lines: 10 }))
  })
})
