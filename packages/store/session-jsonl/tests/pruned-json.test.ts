import { TITLE_SCAN_CHARS } from '@rein/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PrunedJsonParser } from '../src/pruned-json.ts'

/** `text` fed to a parser `step` bytes at a time, into one reused buffer (as the log reader feeds it). */
function parse(text: string, step: number) {
  const bytes = Buffer.from(text)
  const parser = new PrunedJsonParser()
  const reused = Buffer.alloc(step)
  for (let start = 0; start < bytes.length; start += step) {
    const length = bytes.copy(reused, 0, start, start + step)
    parser.feed(reused.subarray(0, length))
    reused.fill(0x21)
  }
  return parser.finish()
}

function jsonParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const VALID = [
  '{"seq":1,"type":"user/message","time":"t","data":{"message":{"content":[{"type":"text","text":"naïve café — 記録 😀"}]}}}',
  '  {"a":[1,-0,0.5,-12.5e+3,1E-2,2e5,0,true,false,null,[],{},[[]],{"b":{}}],"c":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00"} \r',
  '"just a string"', '42', '-0.0e0', 'null', '[ ]', '{ "k" : "v" , "k" : "w" }', '{"__proto__":{"x":1}}', '{"":""}',
]

const INVALID = [
  '', '   ', '{', '}', '[1,]', '{"a":1,}', '{"a" 1}', '{a:1}', "{'a':1}", '01', '1.', '.5', '-', '1e', '1e+', '+1', 'tru', 'nul', 'True',
  '"unterminated', '"bad \\x escape"', '"bad \\u12G4"', '"tab\there"', '[1 2]', '{"a":1}{', '{"a":1} x', '[1]]', '[}', '{]', '\u00a0{}', 'NaN', 'Infinity',
]

describe('PrunedJsonParser', () => {
  it('reads a value within its bounds exactly as JSON.parse does, however the bytes are cut', () => {
    for (const text of VALID) {
      for (const step of [1, 2, 3, 5, 64]) {
        const { parsed } = parse(text, step)
        expect({ text, step, value: parsed?.value, lossy: parsed?.lossy }).toEqual({ text, step, value: jsonParse(text), lossy: false })
      }
    }
  })

  it('keeps a "__proto__" field as the object\'s own, as JSON.parse does', () => {
    const value = parse('{"__proto__":{"x":1}}', 4).parsed?.value as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.keys(value)).toEqual(['__proto__'])
  })

  it('refuses what JSON.parse refuses, and says which lines were blank', () => {
    for (const text of INVALID) {
      for (const step of [1, 3, 64]) {
        expect({ text, step, parsed: parse(text, step).parsed }).toEqual({ text, step, parsed: undefined })
        expect(jsonParse(text)).toBeUndefined()
      }
    }
    expect(parse('', 1).blank).toBe(true)
    expect(parse(' \t\r ', 1).blank).toBe(true)
    expect(parse(' x ', 1).blank).toBe(false)
  })

  it('keeps the start of a huge string, enough for a title, and cuts no escape or character in two', () => {
    for (const unit of ['word ', 'é', '😀', '\\u00e9', '\\\\', '\\n']) {
      const raw = unit.repeat(Math.ceil((2 * 1024 * 1024) / unit.length))
      const text = `{"seq":0,"data":{"text":"${raw}"},"type":"x"}`
      const { parsed } = parse(text, 65_536)
      const whole = (JSON.parse(text) as { data: { text: string } }).data.text
      const kept = (parsed?.value as { data: { text: string }; type: string })
      expect(kept.type).toBe('x')
      expect(kept.data.text.length).toBeGreaterThanOrEqual(TITLE_SCAN_CHARS)
      expect(kept.data.text.length).toBeLessThan(whole.length)
      // A prefix of the whole string, but for a character cut in two (read as U+FFFD at the end).
      expect(whole.startsWith(kept.data.text.replace(/\uFFFD$/u, ''))).toBe(true)
      expect(parsed?.lossy).toBe(false)
    }
  })

  it('keeps a bounded part of a huge array, and every field of the objects around it', () => {
    const blocks = Array.from({ length: 200_000 }, (_, index) => ({ type: 'text', text: `block ${index}` }))
    const text = JSON.stringify({ seq: 3, type: 'assistant/message', time: 't', data: { message: { content: blocks }, usage: { inputTokens: 5, outputTokens: 7 }, model: 'm' } })
    const { parsed } = parse(text, 65_536)
    const value = parsed?.value as { seq: number; data: { message: { content: unknown[] }; usage: unknown; model: string } }
    expect(value.seq).toBe(3)
    expect(value.data.usage).toEqual({ inputTokens: 5, outputTokens: 7 })
    expect(value.data.model).toBe('m')
    expect(value.data.message.content.length).toBeGreaterThan(0)
    expect(value.data.message.content.length).toBeLessThan(blocks.length)
    expect(value.data.message.content).toEqual(blocks.slice(0, value.data.message.content.length))
    expect(parsed?.lossy).toBe(false)
  })

  it('drops fields only past a further margin, and then says the value is lossy', () => {
    const fields = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`field${index}`, index]))
    const { parsed } = parse(JSON.stringify({ seq: 0, data: fields }), 65_536)
    expect(Object.keys((parsed!.value as { data: object }).data).length).toBeLessThan(200_000)
    expect(parsed?.lossy).toBe(true)
  })
})

describe('PrunedJsonParser against JSON.parse, on generated lines', () => {
  /** Small enough that nothing is pruned: the parser must then agree with JSON.parse exactly. */
  const texts = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
    fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value, null, 1)),
  )

  it('accepts a valid line with JSON.parse\'s value, cut into any pieces', () => {
    fc.assert(fc.property(texts, fc.integer({ min: 1, max: 17 }), (text, step) => {
      const { parsed } = parse(text, step)
      expect(parsed?.lossy).toBe(false)
      expect(parsed?.value).toEqual(JSON.parse(text))
    }), { numRuns: 400 })
  })

  it('refuses a line exactly when JSON.parse does, after a byte is changed, dropped or added', () => {
    const noise = fc.constantFrom(...'{}[]:,"\\ -+.eE0123456789tfnulrsaxu\t\r\u00e9\u{1F600}'.split(''), '\\u', '\\"', '\u0001')
    const edited = fc.tuple(texts, fc.nat(), noise, fc.constantFrom('replace', 'drop', 'insert')).map(([text, at, piece, how]) => {
      const i = text.length === 0 ? 0 : at % text.length
      if (how === 'drop') return text.slice(0, i) + text.slice(i + 1)
      if (how === 'insert') return text.slice(0, i) + piece + text.slice(i)
      return text.slice(0, i) + piece + text.slice(i + 1)
    })
    // As the log holds it: UTF-8, where half a surrogate pair (from splitting an emoji) is U+FFFD.
    fc.assert(fc.property(edited.map((text) => Buffer.from(text).toString('utf8')), fc.integer({ min: 1, max: 9 }), (text, step) => {
      const { parsed } = parse(text, step)
      expect({ accepted: parsed !== undefined, value: parsed?.value }).toEqual({ accepted: isJson(text), value: jsonParse(text) })
    }), { numRuns: 1500 })
  })
})

/** Whether JSON.parse accepts `text` (a line of `null` parses to null, which `jsonParse` cannot tell from a refusal). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
