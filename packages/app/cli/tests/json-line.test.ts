import { describe, expect, it } from 'vitest'
import { jsonLine } from '../src/json-line.ts'

const noisy = 0.1 + 0.2

describe('jsonLine', () => {
  it('rounds the cost of a spending record (money beside its tokens)', () => {
    expect(JSON.parse(jsonLine({ type: 'attempt', usage: { inputTokens: 1, outputTokens: 1 }, cost: noisy }))).toMatchObject({ cost: 0.3 })
  })

  it('leaves a cost in a tool\'s output or a plugin\'s event as they gave it: only rein\'s spending is rounded', () => {
    const line = JSON.parse(jsonLine({ type: 'tool-end', card: { value: { cost: noisy } }, event: { type: 'quote', cost: noisy } }))
    expect(line).toMatchObject({ card: { value: { cost: noisy } }, event: { cost: noisy } })
  })

  it('escapes what a terminal would act on or hide (C1 controls, bidi overrides, line separators): the same text to a JSON reader, inert on a terminal', () => {
    const text = 'a\u009b31mred \u202Eevil\u2028next\u200Bhidden\u007F'
    const line = jsonLine({ content: text })
    expect(line).toBe('{"content":"a\\u009b31mred \\u202eevil\\u2028next\\u200bhidden\\u007f"}')
    expect(JSON.parse(line)).toEqual({ content: text })
  })

  it('escapes characters past U+FFFF too (tag characters carry hidden text), as surrogate pairs, and keeps what emoji need', () => {
    const text = 'a\u{E0041}b\u{1F600}\u200D\uFE0F'
    const line = jsonLine({ text })
    expect(line).toBe('{"text":"a\\udb40\\udc41b\u{1F600}\u200D\uFE0F"}')
    expect(JSON.parse(line)).toEqual({ text })
  })

  it('prints null for a value with no JSON, rather than throw', () => {
    expect(jsonLine(undefined)).toBe('null')
  })
})
