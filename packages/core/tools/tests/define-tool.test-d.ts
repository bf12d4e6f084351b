// Type tests: checked by `tsc -b` (this folder is in the package's tsconfig), so a wrong expectation fails `pnpm typecheck`.
import type { FrozenJson } from '@rein/base'
import { expectTypeOf } from 'vitest'
import { defineTool, jsonSchema, type DefinedTool, type ToolDefinition, type ToolRegistry } from '../src/index.ts'

const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city.',
  parameters: {
    city: { type: 'string', required: true },
    units: { type: 'string', enum: ['c', 'f'] },
    days: { type: 'integer' },
    tags: { type: 'array', items: { type: 'string' } },
    extra: { type: 'json' },
    where: { type: 'object', additionalProperties: false, properties: { lat: { type: 'number', required: true }, lon: { type: 'number' } } },
    loose: { type: 'object', additionalProperties: true, properties: { id: { type: 'string', required: true } } },
    either: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    fixed: { type: 'boolean', const: true },
  },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { temp: { type: 'number', required: true }, sky: { type: 'string', enum: ['clear', 'cloudy'], required: true } },
    },
    render: (args, value) => {
      expectTypeOf(value).toEqualTypeOf<{ readonly temp: number; readonly sky: 'clear' | 'cloudy' }>()
      expectTypeOf(args.city).toEqualTypeOf<string>()
      return `${value.temp}`
    },
  },
  execute: (args, run) => {
    expectTypeOf(args.city).toEqualTypeOf<string>()
    expectTypeOf(args.units).toEqualTypeOf<'c' | 'f' | undefined>()
    expectTypeOf(args.days).toEqualTypeOf<number | undefined>()
    expectTypeOf(args.tags).toEqualTypeOf<readonly string[] | undefined>()
    expectTypeOf(args.extra).toEqualTypeOf<FrozenJson | undefined>()
    expectTypeOf(args.where).toEqualTypeOf<{ readonly lat: number; readonly lon?: number } | undefined>()
    expectTypeOf(args.loose?.id).toEqualTypeOf<string | undefined>()
    expectTypeOf(args.either).toEqualTypeOf<string | null | undefined>()
    expectTypeOf(args.fixed).toEqualTypeOf<true | undefined>()
    expectTypeOf(run.signal).toEqualTypeOf<AbortSignal>()
    expectTypeOf(run.sessionId).toEqualTypeOf<string | undefined>()
    // @ts-expect-error arguments are frozen
    args.city = 'x'
    return { temp: 21, sky: 'clear' as const }
  },
})
// Any defined tool is accepted by `register`.
declare const registry: ToolRegistry
export const dispose: () => Promise<void> = registry.register(weather)

defineTool({
  name: 'bad_return',
  description: 'Returns the wrong shape.',
  parameters: {},
  output: { schema: { type: 'number' }, render: (_args, value) => String(value) },
  // @ts-expect-error execute must return what output.schema describes
  execute: () => 'not a number',
})

defineTool({
  name: 'bad_object',
  description: 'An object without additionalProperties.',
  // @ts-expect-error nested objects must declare additionalProperties
  parameters: { o: { type: 'object', properties: {} } },
  output: { schema: { type: 'null' }, render: () => '' },
  execute: () => null,
})

interface Query { q: string; limit?: number }
defineTool({
  name: 'raw',
  description: 'A hand-written JSON Schema tool.',
  parameters: jsonSchema<Query>({ type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } }, required: ['q'] }),
  output: { schema: jsonSchema<string[]>({ type: 'array', items: { type: 'string' } }), render: (_args, value) => value.join('\n') },
  execute: (args) => {
    expectTypeOf(args).toEqualTypeOf<{ readonly q: string; readonly limit?: number }>()
    return [args.q]
  },
})

defineTool({
  name: 'defaults',
  description: 'Properties with a default are always present in args.',
  parameters: {
    query: { type: 'string', required: true, pattern: '^\\S' },
    limit: { type: 'integer', default: 10 },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'fast' },
    tags: { type: 'array', items: { type: 'string' }, default: ['a'] },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: { depth: { type: 'integer', default: 1 }, follow: { type: 'boolean' } },
      default: {},
    },
    plain: { type: 'number', examples: [1, 2] },
  },
  output: { schema: { type: 'null' }, render: () => '' },
  execute: (args) => {
    expectTypeOf(args.query).toEqualTypeOf<string>()
    expectTypeOf(args.limit).toEqualTypeOf<number>()
    expectTypeOf(args.mode).toEqualTypeOf<'fast' | 'slow'>()
    expectTypeOf(args.tags).toEqualTypeOf<readonly string[]>()
    expectTypeOf(args.options).toEqualTypeOf<{ readonly depth: number; readonly follow?: boolean }>()
    expectTypeOf(args.plain).toEqualTypeOf<number | undefined>()
    return null
  },
})

defineTool({
  name: 'bad_default',
  description: 'A default must be of the property type.',
  // @ts-expect-error a string default on an integer property
  parameters: { limit: { type: 'integer', default: 'ten' } },
  output: { schema: { type: 'null' }, render: () => '' },
  execute: () => null,
})

// Tools of different types register in one loop (a package that registers all it defines).
const search = defineTool({
  name: 'search',
  description: 'Searches.',
  parameters: { query: { type: 'string', required: true } },
  output: { schema: { type: 'array', items: { type: 'string' } }, render: (_args, value) => value.join('\n') },
  execute: (args) => [args.query],
  isConcurrencySafe: (args) => args.query !== '',
})
const count = defineTool({
  name: 'count',
  description: 'Counts.',
  parameters: { text: { type: 'string', required: true }, limit: { type: 'integer', default: 10 } },
  output: { schema: { type: 'integer' }, render: (_args, value) => String(value) },
  execute: (args) => Math.min(args.text.length, args.limit),
  isConcurrencySafe: true,
  presentCall: (args) => ({ card: 'generic', title: args.text }),
})
for (const tool of [weather, search, count]) registry.register(tool)
export const tools = [weather, search, count] as const
tools.map((tool) => registry.register(tool))
// Registering a tool defined in place keeps its inferred types: nothing widens to any.
registry.register(defineTool({
  name: 'inline',
  description: 'Defined where it is registered.',
  parameters: { path: { type: 'string', required: true } },
  output: { schema: { type: 'null' }, render: (_args, value) => { expectTypeOf(value).toEqualTypeOf<null>(); return '' } },
  execute: (args) => {
    expectTypeOf(args).toEqualTypeOf<{ readonly path: string }>()
    expectTypeOf(args).not.toBeAny()
    return null
  },
  isConcurrencySafe: (args) => { expectTypeOf(args.path).toEqualTypeOf<string>(); return true },
}))
// @ts-expect-error register takes a definition, not any object
registry.register({ name: 'x', description: 'No body.' })
// A definition written in place without defineTool keeps its types too: a raw schema's type reaches
// execute and render.
registry.register({
  name: 'raw_inline',
  description: 'Defined in place with raw schemas.',
  parameters: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
  output: { schema: jsonSchema<string>({ type: 'string' }), render: (_args, value) => { expectTypeOf(value).toEqualTypeOf<string>(); return value } },
  execute: (args) => {
    expectTypeOf(args.q).toEqualTypeOf<string>()
    return args.q
  },
})

// A definition written in place is held to what defineTool holds it to: its types come from its
// schemas, and nothing in it is let through as "any defined tool".
registry.register({
  name: 'dsl_inline',
  description: 'Defined in place with DSL schemas.',
  parameters: { text: { type: 'string', required: true }, limit: { type: 'integer', default: 3 } },
  output: {
    schema: { type: 'array', items: { type: 'string' } },
    render: (args, value) => {
      expectTypeOf(value).toEqualTypeOf<readonly string[]>()
      expectTypeOf(args.limit).toEqualTypeOf<number>()
      return value.join(' ')
    },
  },
  execute: async (args) => {
    expectTypeOf(args).toEqualTypeOf<{ readonly text: string; readonly limit: number }>()
    return args.text.split(' ').slice(0, args.limit)
  },
  isConcurrencySafe: (args) => { expectTypeOf(args.text).toEqualTypeOf<string>(); return true },
})
// @ts-expect-error execute returns a string where the output schema says a number, in place as in defineTool
registry.register({
  name: 'inline_mismatch',
  description: 'execute returns a string where the output schema says a number.',
  parameters: {},
  output: { schema: { type: 'number' }, render: (_args, value) => String(value) },
  execute: () => 'not a number',
})
// @ts-expect-error an async execute's value must fit output.schema, in place as in defineTool
registry.register({
  name: 'inline_async_mismatch',
  description: 'An async execute resolving to the wrong type.',
  parameters: { n: { type: 'integer', required: true } },
  output: { schema: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer', required: true } } }, render: () => '' },
  execute: async (args) => ({ count: args.n }),
})
// @ts-expect-error render takes the value output.schema describes, in place as in defineTool
registry.register({
  name: 'inline_render_mismatch',
  description: 'render expects another value than execute returns and the schema describes.',
  parameters: {},
  output: { schema: { type: 'string' }, render: (_args, value: { lines: string[] }) => value.lines.join('\n') },
  execute: () => 'text',
})
// @ts-expect-error execute must return what the raw output schema is typed as, in place as in defineTool
registry.register({
  name: 'inline_raw_mismatch',
  description: 'A raw output schema and an execute of another type.',
  parameters: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }),
  output: { schema: jsonSchema<string>({ type: 'string' }), render: (_args, value) => value },
  execute: (args) => args.q.length,
})
registry.register({
  name: 'inline_bad_parameters',
  description: 'A nested object without additionalProperties, in place.',
  // @ts-expect-error nested objects must declare additionalProperties, in place as in defineTool
  parameters: { o: { type: 'object', properties: {} } },
  output: { schema: { type: 'null' }, render: () => '' },
  execute: () => null,
})
// What is typed as a definition already was checked where it was made: a function that returns a
// ToolDefinition, a helper generic over one, a list of DefinedTool.
declare function makeTool(): ToolDefinition<{ readonly path: string }, { readonly lines: number }>
registry.register(makeTool())
export const registerOne = <A, V>(tool: ToolDefinition<A, V> | undefined): void => {
  if (tool) registry.register(tool)
}
const defined: DefinedTool[] = [weather, search, count, makeTool()]
for (const tool of defined) registry.register(tool)
// A copy of a defined tool under another name is a defined tool too.
registry.register({ ...search, name: 'search_again' })
