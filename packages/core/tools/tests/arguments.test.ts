// What the body receives for the model's raw argument string: patterns and defaults enforced, numbers never rounded.
import { describe, expect, it } from 'vitest'
import { defineTool, jsonSchema, type JsonSchema, type PropertiesSpec } from '../src/index.ts'
import { call, createRegistry } from './fixtures.ts'

/** Registers `parameters` (DSL or raw) on a tool that records what its body got. */
async function recording(parameters: PropertiesSpec | ReturnType<typeof jsonSchema>) {
  const { tools } = await createRegistry()
  const bodies: unknown[] = []
  tools.register(defineTool({
    name: 't',
    description: 'A tool under test.',
    parameters: parameters as PropertiesSpec,
    output: { schema: { type: 'null' }, render: () => 'ok' },
    execute: (args) => { bodies.push(args); return null },
  }))
  const run = async (raw: unknown) => {
    const result = await tools.execute(call('t', raw))
    return result.isError ? result.error : { ok: bodies.at(-1) }
  }
  return { tools, bodies, run }
}

const patternDsl = {
  name: { type: 'string', pattern: '^[a-z]+$' },
  letter: { type: 'string', pattern: '^\\p{L}$' },
} as const
const patternRaw: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', pattern: '^[a-z]+$' }, letter: { type: 'string', pattern: '^\\p{L}$' } },
  additionalProperties: false,
}

describe.each([['the DSL', patternDsl], ['jsonSchema(...)', jsonSchema(patternRaw)]])('pattern, written with %s', (_how, parameters) => {
  it('is enforced: a string that does not match never reaches the body', async () => {
    const { run, bodies } = await recording(parameters)
    expect(await run({ name: 'Robert' })).toEqual({ code: 'INVALID_ARGS', message: 'invalid arguments for t: $.name: must match the pattern ^[a-z]+$' })
    expect(await run({ name: 'x; rm -rf /' })).toMatchObject({ code: 'INVALID_ARGS' })
    expect(bodies).toEqual([])
    expect(await run({ name: 'robert' })).toEqual({ ok: { name: 'robert' } })
  })

  it('searches anywhere in the string unless anchored, and runs with the u flag (code points, \\p{…})', async () => {
    const { run } = await recording(parameters)
    expect(await run({ letter: 'é' })).toEqual({ ok: { letter: 'é' } })
    expect(await run({ letter: '\u{1D49C}' })).toEqual({ ok: { letter: '\u{1D49C}' } })
    expect(await run({ letter: 'ab' })).toMatchObject({ code: 'INVALID_ARGS' })
  })
})

const defaultsDsl = {
  limit: { type: 'integer', minimum: 1, default: 10 },
  mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
  options: {
    type: 'object',
    additionalProperties: false,
    properties: { depth: { type: 'integer', default: 1 }, follow: { type: 'boolean' } },
    default: {},
  },
  filters: {
    type: 'array',
    items: { type: 'object', additionalProperties: false, properties: { field: { type: 'string', required: true }, op: { type: 'string', default: 'eq' } } },
  },
} as const
const defaultsRaw: JsonSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, default: 10 },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: { depth: { type: 'integer', default: 1 }, follow: { type: 'boolean' } },
      default: {},
    },
    filters: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, properties: { field: { type: 'string' }, op: { type: 'string', default: 'eq' } }, required: ['field'] },
    },
  },
  additionalProperties: false,
}

describe.each([['the DSL', defaultsDsl], ['jsonSchema(...)', jsonSchema(defaultsRaw)]])('default, written with %s', (_how, parameters) => {
  it('fills in a missing property, nested objects included, and the body gets frozen arguments', async () => {
    const { run, bodies } = await recording(parameters)
    expect(await run({})).toEqual({ ok: { limit: 10, mode: 'fast', options: { depth: 1 } } })
    expect(await run({ limit: 3, options: { follow: true }, filters: [{ field: 'a' }, { field: 'b', op: 'ne' }] })).toEqual({
      ok: { limit: 3, mode: 'fast', options: { follow: true, depth: 1 }, filters: [{ field: 'a', op: 'eq' }, { field: 'b', op: 'ne' }] },
    })
    const last = bodies.at(-1) as { filters: object[]; options: object }
    expect(Object.isFrozen(last)).toBe(true)
    expect(Object.isFrozen(last.options)).toBe(true)
    expect(Object.isFrozen(last.filters[0])).toBe(true)
  })

  it('never replaces a value the model sent, even a wrong one or null', async () => {
    const { run, bodies } = await recording(parameters)
    expect(await run({ limit: 'ten' })).toEqual({ code: 'INVALID_ARGS', message: 'invalid arguments for t: $.limit: expected an integer but got "ten"' })
    expect(await run({ mode: null })).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('$.mode') })
    expect(await run({ limit: 0 })).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('$.limit: must be >= 1') })
    expect(bodies).toEqual([])
  })

  it('gives presenters and isConcurrencySafe the same arguments as the body', async () => {
    const { tools } = await createRegistry()
    const seen: unknown[] = []
    tools.register(defineTool({
      name: 't', description: 'A tool under test.', parameters: parameters as PropertiesSpec,
      output: { schema: { type: 'null' }, render: () => 'ok' },
      execute: () => null,
      isConcurrencySafe: (args) => { seen.push(args); return true },
      presentCall: (args) => { seen.push(args); return undefined },
    }))
    tools.isConcurrencySafe('t', '{}')
    tools.presentCall('t', '')
    expect(seen).toEqual([{ limit: 10, mode: 'fast', options: { depth: 1 } }, { limit: 10, mode: 'fast', options: { depth: 1 } }])
  })
})

describe('numbers the model sends are never rounded', () => {
  const store = { id: { type: 'integer' }, ids: { type: 'array', items: { type: 'integer' } }, any: { type: 'json' }, text: { type: 'string' }, amount: { type: 'number' } } as const

  it('rejects an integer beyond 2^53 instead of rounding it', async () => {
    const { run, bodies } = await recording(store)
    expect(await run('{"id": 9007199254740993}')).toEqual({
      code: 'INVALID_ARGS',
      message: 'invalid arguments for t: $.id: 9007199254740993 is beyond ±9007199254740991, past which a JSON number is not kept exactly; send a value within that range',
    })
    expect(bodies).toEqual([])
  })

  it.each([
    ['nested in an array', '{"ids": [1, -9007199254740993]}', '$.ids[1]'],
    ['inside a free-form json value', '{"any": {"odd key": [{"deep": 123456789012345678901234567890}]}}', '$.any["odd key"][0].deep'],
    ['with a zero fraction', '{"id": 9007199254740993.0}', '$.id'],
    ['as a number type with a fraction', '{"amount": 12345678901234567.5}', '$.amount'],
    ['after a key with escapes and a string with a quote', '{"text": "say \\"1\\"", "any": {"a\\"b": 99999999999999999}}', '$.any["a\\"b"]'],
    ['at the root', '99999999999999999', '$'],
  ])('rejects a too-large number %s, naming its path', async (_label, raw, path) => {
    const { run, bodies } = await recording(store)
    const error = await run(raw)
    expect(error).toMatchObject({ code: 'INVALID_ARGS' })
    expect((error as { message: string }).message).toContain(`${path}: `)
    expect((error as { message: string }).message).toContain('send a value within that range')
    expect(bodies).toEqual([])
  })

  it('lists every too-large number at once', async () => {
    const { run } = await recording(store)
    expect(await run('{"id": 9007199254740993, "ids": [18014398509481985]}')).toEqual({
      code: 'INVALID_ARGS',
      message: 'invalid arguments for t: $.id: 9007199254740993 is beyond ±9007199254740991, past which a JSON number is not kept exactly; send a value within that range; '
        + '$.ids[0]: 18014398509481985 is beyond ±9007199254740991, past which a JSON number is not kept exactly; send a value within that range',
    })
  })

  it('rejects a number too large for a double instead of failing the call', async () => {
    const { run } = await recording(store)
    expect(await run('{"amount": 1e400}')).toEqual({
      code: 'INVALID_ARGS',
      message: 'invalid arguments for t: $.amount: the number is too large to represent; send a smaller one',
    })
  })

  it.each([
    ['the largest safe integer', '{"id": 9007199254740991, "ids": [-9007199254740991]}', { id: 9007199254740991, ids: [-9007199254740991] }],
    ['long digit runs inside strings', '{"text": "order 99999999999999999999 \\\\", "any": "9007199254740993"}', { text: 'order 99999999999999999999 \\', any: '9007199254740993' }],
    ['a long digit run as a key', '{"any": {"99999999999999999999": 1}}', { any: { '99999999999999999999': 1 } }],
    ['exponent notation, which is a float', '{"amount": 1.5e300}', { amount: 1.5e300 }],
    ['a long fraction, which is a float', '{"amount": 0.12345678901234567890123}', { amount: Number('0.12345678901234567890123') }],
  ])('keeps %s', async (_label, raw, expected) => {
    const { run } = await recording(store)
    expect(await run(raw)).toEqual({ ok: expected })
  })
})

describe('text the model sends is whole characters', () => {
  const store = { text: { type: 'string' }, any: { type: 'json' }, tags: { type: 'array', items: { type: 'string' } } } as const
  const half = 'holds half a character (a lone UTF-16 surrogate, often a cut emoji); send the whole character, or leave it out'

  it.each([
    ['escaped in a string', '{"text": "smile \\ud83d"}', `$.text: ${half}`],
    ['as a raw code unit in a string', `{"text": "smile \ud83d"}`, `$.text: ${half}`],
    ['a low half alone, in an array', '{"tags": ["ok", "\\ude00"]}', `$.tags[1]: ${half}`],
    ['in a free-form value', '{"any": {"deep": ["\\udc00x"]}}', `$.any.deep[0]: ${half}`],
    ['in a property name', '{"any": {"k\\ud800": 1}}', `$.any["k\\ud800"]: its name ${half}`],
  ])('refuses half a surrogate pair %s, naming where, before the body runs', async (_label, raw, problem) => {
    const { run, bodies } = await recording(store)
    expect(await run(raw)).toEqual({ code: 'INVALID_ARGS', message: `invalid arguments for t: ${problem}` })
    expect(bodies).toEqual([])
  })

  it('keeps a whole pair, escaped or raw', async () => {
    const { run } = await recording(store)
    expect(await run('{"text": "\\ud83d\\ude00 \u{1F600}"}')).toEqual({ ok: { text: '\u{1F600} \u{1F600}' } })
  })
})

describe('a placeholder compaction left in a pruned call, copied by the model', () => {
  const store = { path: { type: 'string' }, content: { type: 'string' }, any: { type: 'json' } } as const
  const what = 'is only the placeholder compaction left in place of text from an earlier call, not the text itself; send the text (read it again from where it lives, such as the file, if you need it)'

  it.each([
    ['as a field', '{"path": "a.txt", "content": "[2000 characters left out to save context]"}', `$.content: ${what}`],
    ['deep in a free-form value', '{"any": {"parts": ["ok", "[12 characters left out to save context]"]}}', `$.any.parts[1]: ${what}`],
    ['with a line break after it', '{"content": "[2000 characters left out to save context]\\n"}', `$.content: ${what}`],
  ])('is refused %s, naming where, before the body runs (a write would put it in the file)', async (_label, raw, problem) => {
    const { run, bodies } = await recording(store)
    expect(await run(raw)).toEqual({ code: 'INVALID_ARGS', message: `invalid arguments for t: ${problem}` })
    expect(bodies).toEqual([])
  })

  it('is taken when it is part of a longer text (a file that quotes it)', async () => {
    const { run } = await recording(store)
    const content = 'The log showed [2000 characters left out to save context] here.'
    expect(await run(JSON.stringify({ content }))).toEqual({ ok: { content } })
  })
})

it('names an unknown property with a 200,000-character name shortened, keeping what to do', async () => {
  const { run } = await recording({ text: { type: 'string' } })
  const error = await run(`{"${'k'.repeat(200_000)}": 1}`) as { code: string; message: string }
  expect(error.code).toBe('INVALID_ARGS')
  expect(error.message.length).toBeLessThan(400)
  expect(error.message).toMatch(/^invalid arguments for t: \$\.k+…k+: unknown property \(allowed: text\)$/)
})

describe('a property the model sends twice', () => {
  const store = { text: { type: 'string' }, any: { type: 'json' }, list: { type: 'array', items: { type: 'json' } } } as const

  it.each([
    ['at the top', '{"text": "rm -rf build", "text": "rm -rf /"}', '$.text'],
    ['nested', '{"any": {"a": 1, "b": {"c": 1, "c": 2}}}', '$.any.b.c'],
    ['in an array item, after a string holding a colon', '{"list": [{"x": "a\\": b"}, {"y": 1, "y": 1}]}', '$.list[1].y'],
    ['with a name written with escapes', '{"any": {"k\\u0065y": 1, "key": 2}}', '$.any.key'],
  ])('is refused %s, naming it, instead of keeping the last silently', async (_label, raw, path) => {
    const { run, bodies } = await recording(store)
    expect(await run(raw)).toEqual({ code: 'INVALID_ARGS', message: `invalid arguments for t: ${path}: given more than once; send each property once, with the value you mean` })
    expect(bodies).toEqual([])
  })

  it.each([
    ['the same name in sibling objects', '{"list": [{"a": 1}, {"a": 2}]}', { list: [{ a: 1 }, { a: 2 }] }],
    ['a string that looks like a repeated key', '{"text": "\\"a\\": 1, \\"a\\": 2"}', { text: '"a": 1, "a": 2' }],
  ])('keeps %s', async (_label, raw, expected) => {
    const { run } = await recording(store)
    expect(await run(raw)).toEqual({ ok: expected })
  })
})
