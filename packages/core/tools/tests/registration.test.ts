// Every keyword a tool's schema may use is either enforced or refused at registration, by the DSL and jsonSchema(...) alike.
import { describe, expect, it } from 'vitest'
import { defineTool, jsonSchema, type JsonSchema, type PropertiesSpec, type ValueSpec } from '../src/index.ts'
import { createRegistry } from './fixtures.ts'

function withParameters(parameters: unknown) {
  return defineTool({
    name: 't',
    description: 'A tool under test.',
    parameters: parameters as PropertiesSpec,
    output: { schema: { type: 'null' }, render: () => 'ok' },
    execute: () => null,
  })
}

function withOutput(schema: unknown) {
  return defineTool({
    name: 't',
    description: 'A tool under test.',
    parameters: {},
    output: { schema: schema as ValueSpec, render: () => 'ok' },
    execute: () => null as never,
  })
}

async function registrationError(definition: unknown) {
  const { tools } = await createRegistry()
  let caught: unknown
  try {
    tools.register(definition as ReturnType<typeof withParameters>)
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(Error)
  expect(tools.list()).toEqual([])
  return caught as Error & { code: string; details?: Record<string, unknown> }
}

describe('DSL keys', () => {
  it.each([
    [{ text: { type: 'string', requird: true } }, '$.properties.text', 'requird', 'required'],
    [{ n: { type: 'integer', minimun: 1 } }, '$.properties.n', 'minimun', 'minimum'],
    [{ s: { type: 'string', maxLenght: 3 } }, '$.properties.s', 'maxLenght', 'maxLength'],
    [{ x: { type: 'string', Enum: ['a'] } }, '$.properties.x', 'Enum', 'enum'],
    [{ tags: { type: 'array', items: { type: 'string', descripton: 'a tag' } } }, '$.properties.tags.items', 'descripton', 'description'],
    [{ o: { type: 'object', additionalProperties: false, properties: { deep: { type: 'boolean', defualt: true } } } }, '$.properties.o.properties.deep', 'defualt', 'default'],
    [{ e: { oneOf: [{ type: 'string' }, { type: 'null' }], titel: 'either' } }, '$.properties.e', 'titel', 'title'],
    [{ o: { type: 'object', properties: {}, additionalProperty: false } }, '$.properties.o', 'additionalProperty', 'additionalProperties'],
  ])('refuses a misspelled key at registration, naming the tool, the path and the closest key (%j)', async (parameters, path, key, closest) => {
    const error = await registrationError(withParameters(parameters))
    expect(error.code).toBe('INVALID_TOOL_DEFINITION')
    expect(error.message).toContain(`tool "t": parameters: ${path}: unknown key "${key}" (did you mean "${closest}"?)`)
    expect(error.details).toMatchObject({ tool: 't', path, key })
  })

  it('refuses a misspelled key in output.schema the same way', async () => {
    const error = await registrationError(withOutput({ type: 'object', additionalProperties: false, properties: { a: { type: 'string', requried: true } } }))
    expect(error.message).toBe('tool "t": output.schema: $.properties.a: unknown key "requried" (did you mean "required"?)')
  })

  it('lists the keys allowed where nothing is close', async () => {
    const error = await registrationError(withParameters({ on: { type: 'boolean', colour: 'red' } }))
    expect(error.message).toBe('tool "t": parameters: $.properties.on: unknown key "colour" (allowed here: type, description, title, default, examples, const, required)')
  })

  it('says which type a key belongs to when it is used on another', async () => {
    const error = await registrationError(withParameters({ n: { type: 'integer', minLength: 1 } }))
    expect(error.message).toBe('tool "t": parameters: $.properties.n: "minLength" does not apply to type "integer" (it is for string)')
  })

  it('refuses required outside a properties map', async () => {
    const error = await registrationError(withParameters({ tags: { type: 'array', items: { type: 'string', required: true } } }))
    expect(error.message).toBe('tool "t": parameters: $.properties.tags.items: "required" marks a property of an object; it means nothing here')
  })
})

/** The same parameters written in the DSL and as a hand-written schema: both must be judged alike. */
const both = (dsl: Record<string, unknown>, raw: JsonSchema) => [
  ['the DSL', withParameters(dsl)],
  ['jsonSchema(...)', withParameters(jsonSchema(raw))],
] as const

describe.each([
  ['format, pointing to pattern',
    { at: { type: 'string', format: 'date-time' } },
    { type: 'object', properties: { at: { type: 'string', format: 'date-time' } as JsonSchema } },
    '$.properties.at: "format" is not supported: rein does not check it; use "pattern" with a regular expression instead'],
  ['a pattern that is not a regular expression',
    { s: { type: 'string', pattern: '[' } },
    { type: 'object', properties: { s: { type: 'string', pattern: '[' } } },
    '$.properties.s: "pattern" is not a valid regular expression with the u flag (Invalid regular expression: /[/u: Unterminated character class)'],
  ['a pattern valid only without the u flag',
    { s: { type: 'string', pattern: '\\-' } },
    { type: 'object', properties: { s: { type: 'string', pattern: '\\-' } } },
    '$.properties.s: "pattern" is not a valid regular expression with the u flag'],
  ['a default of the wrong type',
    { n: { type: 'integer', default: 'ten' } },
    { type: 'object', properties: { n: { type: 'integer', default: 'ten' } } },
    '$.properties.n: "default" does not match its own schema: $: expected an integer but got "ten"'],
  ['a default outside the bounds',
    { n: { type: 'integer', minimum: 1, default: 0 } },
    { type: 'object', properties: { n: { type: 'integer', minimum: 1, default: 0 } } },
    '$.properties.n: "default" does not match its own schema: $: must be >= 1'],
  ['a default whose nested defaults break it',
    { o: { type: 'object', additionalProperties: false, properties: { a: { type: 'string', pattern: '^x', default: 'y' } }, default: {} } },
    { type: 'object', properties: { o: { type: 'object', additionalProperties: false, properties: { a: { type: 'string', pattern: '^x', default: 'y' } }, default: {} } } },
    '$.properties.o.properties.a: "default" does not match its own schema: $: must match the pattern ^x'],
  ['a required property with a default',
    { n: { type: 'integer', required: true, default: 1 } },
    { type: 'object', properties: { n: { type: 'integer', default: 1 } }, required: ['n'] },
    '$.properties.n: a required property cannot have a default (the model must send it, so the default would never apply); drop one'],
  ['a default on array items',
    { tags: { type: 'array', items: { type: 'string', default: 'x' } } },
    { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', default: 'x' } } } },
    '$.properties.tags.items: "default" applies only to a property of an object'],
  ['a default inside oneOf',
    { v: { oneOf: [{ type: 'object', additionalProperties: false, properties: { a: { type: 'string', default: 'x' } } }, { type: 'null' }] } },
    { type: 'object', properties: { v: { oneOf: [{ type: 'object', additionalProperties: false, properties: { a: { type: 'string', default: 'x' } } }, { type: 'null' }] } } },
    '$.properties.v.oneOf[0].properties.a: "default" inside oneOf is ambiguous; put it on the property that holds the oneOf'],
  ['an example that does not match',
    { n: { type: 'integer', examples: [1, 'two'] } },
    { type: 'object', properties: { n: { type: 'integer', examples: [1, 'two'] } } },
    '$.properties.n: examples[1] does not match the schema: $: expected an integer but got "two"'],
  ['a negative length bound',
    { s: { type: 'string', maxLength: -1 } },
    { type: 'object', properties: { s: { type: 'string', maxLength: -1 } } },
    '$.properties.s: "maxLength" must be a non-negative integer'],
])('refuses %s at registration', (_label, dsl, raw, message) => {
  it.each(both(dsl, raw as JsonSchema))('written with %s', async (_how, definition) => {
    const error = await registrationError(definition)
    expect(error.code).toBe('INVALID_TOOL_DEFINITION')
    expect(error.message).toContain(`tool "t": parameters: ${message}`)
  })
})

describe('keywords only for parameters', () => {
  it('refuses a default in output.schema', async () => {
    const error = await registrationError(withOutput({ type: 'object', additionalProperties: false, properties: { a: { type: 'string', default: 'x' } } }))
    expect(error.message).toBe('tool "t": output.schema: $.properties.a: "default" is only for parameters (a tool\'s output is what execute returns)')
  })
})

describe('what the model sees', () => {
  it('sends pattern, default and examples in the schema', async () => {
    const { tools } = await createRegistry()
    tools.register(withParameters({
      id: { type: 'string', pattern: '^[a-z]+$', examples: ['abc'] },
      limit: { type: 'integer', minimum: 1, default: 10 },
    }))
    expect(tools.schemas()[0]!.parameters).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', pattern: '^[a-z]+$', examples: ['abc'] },
        limit: { type: 'integer', minimum: 1, default: 10 },
      },
      additionalProperties: false,
    })
    expect(JSON.stringify(tools.schemas()[0]!.parameters.properties!.id)).toBe('{"type":"string","pattern":"^[a-z]+$","examples":["abc"]}')
  })
})
