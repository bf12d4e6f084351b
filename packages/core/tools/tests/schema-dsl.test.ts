import { describe, expect, it } from 'vitest'
import { compileProperties, compileValue } from '../src/schema-dsl.ts'

describe('compileValue', () => {
  it('compiles every DSL type to the JSON Schema subset', () => {
    expect(compileValue({
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', required: true, minLength: 1, description: 'who' },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        count: { type: 'integer', minimum: 0, maximum: 10 },
        ratio: { type: 'number' },
        on: { type: 'boolean' },
        nothing: { type: 'null' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        anything: { type: 'json', description: 'free-form' },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        open: { type: 'object', properties: {}, additionalProperties: true },
      },
    })).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'who', minLength: 1 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        count: { type: 'integer', minimum: 0, maximum: 10 },
        ratio: { type: 'number' },
        on: { type: 'boolean' },
        nothing: { type: 'null' },
        tags: { type: 'array', maxItems: 3, items: { type: 'string' } },
        anything: { description: 'free-form' },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        open: { type: 'object', properties: {}, additionalProperties: true },
      },
      required: ['name'],
      additionalProperties: false,
    })
  })

  it.each([
    [{ type: 'date' }, '$: unknown type "date" (use one of string, number, integer, boolean, null, array, object, json, or oneOf)'],
    [{ type: 'object', properties: {} }, '$: an object must declare additionalProperties: true or false (false refuses keys not in properties, true lets any through)'],
    [{ type: 'array' }, '$.items: a value spec must be an object such as {type: \'string\'}, but got undefined'],
    [{ oneOf: [{ type: 'string' }] }, '$: "oneOf" needs at least two branches'],
    [{ type: 'object', additionalProperties: false, properties: { 'a b': { type: 'nope' } } }, '$.properties["a b"]: unknown type "nope" (use one of string, number, integer, boolean, null, array, object, json, or oneOf)'],
    [{ type: 'array', items: { type: 'object', properties: { x: { type: 'string', required: false } }, additionalProperties: false } }, '$.items.properties.x: "required" must be true or left out (leave it out for an optional property), but got false'],
  ])('rejects a malformed spec with its path: %j', (spec, message) => {
    expect(() => compileValue(spec)).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA', message }))
  })
})

describe('compileProperties', () => {
  it('keeps property order and lists required keys in declaration order', () => {
    expect(compileProperties({
      z: { type: 'string', required: true },
      a: { type: 'string' },
      m: { type: 'number', required: true },
    })).toEqual({
      properties: { z: { type: 'string' }, a: { type: 'string' }, m: { type: 'number' } },
      required: ['z', 'm'],
    })
  })

  it('leaves out an empty required list', () => {
    expect(compileProperties({})).toEqual({ properties: {} })
  })
})
