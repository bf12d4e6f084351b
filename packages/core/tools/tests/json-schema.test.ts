import { describe, expect, it } from 'vitest'
import { canonicalSchema, validateJson, type JsonSchema } from '../src/json-schema.ts'
import { assertSupportedSchema } from '../src/schema-check.ts'

describe('assertSupportedSchema', () => {
  it('accepts the whole subset', () => {
    expect(() => assertSupportedSchema({
      type: 'object',
      title: 'T',
      description: 'd',
      properties: {
        s: { type: 'string', enum: ['a'], minLength: 1, maxLength: 2, pattern: '^a', default: 'a', examples: ['a'] },
        n: { type: 'integer', minimum: 0, maximum: 1, const: 1 },
        l: { type: 'array', items: {}, minItems: 0, maxItems: 1 },
        o: { oneOf: [{ type: 'null' }, { type: 'boolean' }] },
      },
      required: ['n'],
      additionalProperties: false,
    }, 'parameters')).not.toThrow()
  })

  it.each([
    [{ type: 'object', properties: { when: { type: 'string', format: 'date-time' } } }, '$.properties.when: "format" is not supported: rein does not check it; use "pattern"'],
    [{ type: 'object', properties: { x: { $ref: '#/defs/x' } } }, '$.properties.x: keyword "$ref" is not supported'],
    [{ type: 'array', items: { type: 'string', patern: '^a' } }, '$.items: keyword "patern" is not supported (did you mean "pattern"?)'],
    [{ type: 'number', pattern: '^1' }, '$: "pattern" applies to type "string" only'],
    [{ anyOf: [{ type: 'string' }, { type: 'null' }] }, '$: keyword "anyOf" is not supported'],
    [{ type: ['string', 'null'] }, '$: type ["string","null"] is not supported'],
    [{ type: 'object', additionalProperties: { type: 'string' } }, '$: "additionalProperties" must be true or false'],
    [{ type: 'object', properties: {}, required: ['missing'] }, '$: required property "missing" is not declared in "properties"'],
    [{ type: 'string', enum: ['a', 1] }, '$: enum[1] 1 is not of type "string"'],
    [{ type: 'string', minimum: 1 }, '$: "minimum" applies to type "number" only'],
    [{ oneOf: [{ type: 'string' }] }, '$: "oneOf" needs at least two branches'],
    [{ type: 'string', properties: {} }, '$: "properties", "required" and "additionalProperties" need type "object"'],
  ])('rejects %j naming the path', (schema, start) => {
    expect(() => assertSupportedSchema(schema, 'parameters')).toThrow(expect.objectContaining({
      code: 'INVALID_SCHEMA',
      message: expect.stringContaining(start),
    }))
  })
})

describe('validateJson', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 2 },
      units: { type: 'string', enum: ['c', 'f'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
      at: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
    },
    required: ['city'],
    additionalProperties: false,
  }

  it('returns nothing for a valid value', () => {
    expect(validateJson(schema, { city: 'Oslo', units: 'c', days: 3, tags: ['a'], at: null, nested: { ok: true } })).toEqual([])
  })

  it('reports every problem with its path', () => {
    expect(validateJson(schema, { units: 'k', days: 1.5, tags: ['a', 2, 'c'], at: 5, nested: { extra: 1 }, bogus: true })).toEqual([
      { path: '$.city', message: 'missing required property' },
      { path: '$.units', message: 'expected one of "c", "f" but got "k"' },
      { path: '$.days', message: 'expected an integer but got number 1.5' },
      { path: '$.tags', message: 'must have at most 2 items' },
      { path: '$.tags[1]', message: 'expected a string but got number 2' },
      { path: '$.at', message: 'number 5 matches none of the 2 allowed shapes' },
      { path: '$.nested.ok', message: 'missing required property' },
      { path: '$.nested.extra', message: 'unknown property (allowed: ok)' },
      { path: '$.bogus', message: 'unknown property (allowed: city, units, days, tags, at, nested)' },
    ])
  })

  it('counts string length in code points', () => {
    expect(validateJson({ type: 'string', maxLength: 1 }, '\u{1F600}')).toEqual([])
    expect(validateJson({ type: 'string', minLength: 2 }, '\u{1F600}')).toEqual([{ path: '$', message: 'must be at least 2 characters' }])
  })

  it('says "1 character" and "1 item", not "1 characters"', () => {
    expect(validateJson({ type: 'string', minLength: 1 }, '')).toEqual([{ path: '$', message: 'must be at least 1 character' }])
    expect(validateJson({ type: 'string', maxLength: 1 }, 'ab')).toEqual([{ path: '$', message: 'must be at most 1 character' }])
    expect(validateJson({ type: 'array', items: {}, minItems: 1 }, [])).toEqual([{ path: '$', message: 'must have at least 1 item' }])
    expect(validateJson({ type: 'array', items: {}, maxItems: 1 }, [1, 2])).toEqual([{ path: '$', message: 'must have at most 1 item' }])
  })

  it('checks pattern with the u flag, unanchored, and reports a pattern that does not compile', () => {
    expect(validateJson({ type: 'string', pattern: '\\d' }, 'a1b')).toEqual([])
    expect(validateJson({ type: 'string', pattern: '^.$' }, '\u{1F600}')).toEqual([])
    expect(validateJson({ type: 'string', pattern: '^\\d+$' }, 'a1b')).toEqual([{ path: '$', message: 'must match the pattern ^\\d+$' }])
    expect(validateJson({ type: 'string', pattern: '(' }, 'a')).toEqual([{ path: '$', message: 'the schema\'s pattern "(" is not a valid regular expression' }])
  })

  it('compares enum and const values by JSON equality, whatever the order of an object\'s keys', () => {
    const schema = { enum: [{ a: 1, b: [2, { c: 3 }] }] } as JsonSchema
    expect(validateJson(schema, { b: [2, { c: 3 }], a: 1 })).toEqual([])
    expect(validateJson({ const: { x: 1, y: 2 } } as JsonSchema, { y: 2, x: 1 })).toEqual([])
    expect(validateJson(schema, { a: 1, b: [{ c: 3 }, 2] })).toHaveLength(1)
    expect(validateJson({ const: { x: 1 } } as JsonSchema, { x: 1, y: undefined })).toHaveLength(1)
  })

  it('treats an empty schema as any JSON value', () => {
    expect(validateJson({}, { anything: [1, 'x', null] })).toEqual([])
  })

  it('rejects a value matching more than one oneOf branch', () => {
    expect(validateJson({ oneOf: [{ type: 'number' }, { type: 'integer' }] }, 3)).toEqual([
      { path: '$', message: 'number 3 matches more than one allowed shape' },
    ])
  })
})

describe('canonicalSchema', () => {
  it('orders keywords the same way however the schema was written, keeping property order', () => {
    const a = canonicalSchema({ additionalProperties: false, required: ['b'], properties: { b: { description: 'x', type: 'string' }, a: { type: 'number' } }, type: 'object' })
    const b = canonicalSchema({ type: 'object', properties: { b: { type: 'string', description: 'x' }, a: { type: 'number' } }, required: ['b'], additionalProperties: false })
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    expect(JSON.stringify(a)).toBe('{"type":"object","properties":{"b":{"type":"string","description":"x"},"a":{"type":"number"}},"required":["b"],"additionalProperties":false}')
    expect(Object.isFrozen(a.properties)).toBe(true)
  })
})
