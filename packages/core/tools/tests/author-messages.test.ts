// What a tool author reads when a definition or a registration is refused: each message names the
// tool, the field, what was wrong and what to do. Through the real registry, as a plugin registers.
import type { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { defineTool, jsonSchema, type AnyToolDefinition, type JsonSchema, type PropertiesSpec, type ValueSpec } from '../src/index.ts'
import { call, createRegistry, echo } from './fixtures.ts'

type Refusal = Error & { code: string; details?: Record<string, unknown>; cause?: unknown }

function refusal(register: () => unknown): Refusal {
  try {
    register()
  } catch (error) {
    return error as Refusal
  }
  throw new Error('expected the registration to be refused')
}

async function definitionRefusal(definition: unknown): Promise<Refusal> {
  const { tools } = await createRegistry()
  const error = refusal(() => tools.register(definition as AnyToolDefinition))
  expect(tools.list()).toEqual([])
  return error
}

function withParameters(parameters: unknown) {
  return defineTool({
    name: 't', description: 'A tool under test.', parameters: parameters as PropertiesSpec,
    output: { schema: { type: 'null' }, render: () => 'ok' }, execute: () => null,
  })
}

function withOutput(schema: unknown) {
  return defineTool({
    name: 't', description: 'A tool under test.', parameters: {},
    output: { schema: schema as ValueSpec, render: () => 'ok' }, execute: () => null as never,
  })
}

describe('a JSON Schema where a properties map or a value spec goes', () => {
  it.each([
    ['type, properties and required', { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, '{text: {type: \'string\', required: true}}'],
    ['$schema', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: 'integer' } } }, '{n: {type: \'integer\'}}'],
    ['additionalProperties', { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false }, '{path: {type: \'string\'}}'],
    ['only a required list', { properties: { q: { type: 'string' } }, required: ['q'] }, '{q: {type: \'string\', required: true}}'],
  ])('a JSON Schema passed as parameters is refused saying parameters is a map of properties and how to pass a JSON Schema (%s)', async (_label, schema, example) => {
    const error = await definitionRefusal(withParameters(schema))
    expect(error.code).toBe('INVALID_TOOL_DEFINITION')
    expect(error.message).toMatch(/^tool "t": parameters: \$: this is a JSON Schema \(it has .+\), but parameters is a map from each argument's name to its spec, /)
    expect(error.message).toContain(`e.g. ${example}`)
    expect(error.message).toContain('to pass a JSON Schema, wrap it in jsonSchema() from @rein/tools: parameters: jsonSchema({type: \'object\', properties: {…}')
    expect(error.details).toMatchObject({ tool: 't', field: 'parameters', path: '$' })
  })

  it('an object value spec passed as parameters is refused saying parameters is its properties map, not to wrap it in jsonSchema()', async () => {
    const error = await definitionRefusal(withParameters({ type: 'object', properties: { text: { type: 'string', required: true } }, additionalProperties: false }))
    expect(error.message).toBe('tool "t": parameters: $: this is an object value spec ({type: \'object\', properties: …}), but parameters is the properties map itself: write parameters: {text: {type: \'string\', required: true}}, the specs that are under "properties"')
  })

  it('a JSON Schema with $schema passed as parameters also says to drop $schema', async () => {
    const error = await definitionRefusal(withParameters({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: {} }))
    expect(error.message).toContain('and drop "$schema"')
  })

  it('a properties map whose arguments are named type, properties and required is not taken for a JSON Schema', async () => {
    const { tools } = await createRegistry()
    tools.register(withParameters({ type: { type: 'string' }, properties: { type: 'json' }, required: { type: 'boolean' } }))
    expect(Object.keys(tools.schemas()[0]!.parameters.properties!)).toEqual(['type', 'properties', 'required'])
  })

  it('a JSON Schema object passed as output.schema is refused saying to mark required properties and how to pass a JSON Schema', async () => {
    const error = await definitionRefusal(withOutput({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }))
    expect(error.message).toBe('tool "t": output.schema: $: "required" is a list in JSON Schema; in a value spec, mark each required property with required: true instead (or pass a JSON Schema through jsonSchema() from @rein/tools)')
    expect(error.details).toMatchObject({ tool: 't', field: 'output.schema', path: '$', key: 'required' })
  })

  it.each([
    ['the DSL', { type: 'object', additionalProperties: false, properties: {}, $schema: 'x' }, 'output.schema: $: "$schema" belongs to a JSON Schema; a value spec has none: drop it (or pass a JSON Schema through jsonSchema() from @rein/tools)'],
    ['jsonSchema(...)', jsonSchema({ $schema: 'x', type: 'string' } as JsonSchema), 'output.schema: $: "$schema" is not needed: rein reads every schema as the JSON Schema subset it supports; drop it'],
  ])('a $schema key is refused saying to drop it (%s)', async (_how, schema, message) => {
    const error = await definitionRefusal(withOutput(schema))
    expect(error.message).toBe(`tool "t": ${message}`)
  })
})

/** A plugin that registers what `register` is given, as a cordis.yml row when `row` is set. */
function registeringPlugin(name: string, register: (ctx: Context) => void, row?: { id: string; name: string }) {
  return {
    name,
    inject: ['tools'],
    apply: (ctx: Context) => {
      // What cordis's loader sets on the fiber of every plugin it starts for a row (`Fiber.entry`).
      if (row) Object.assign(ctx.fiber, { entry: { options: row } })
      register(ctx)
    },
  }
}

async function clash(first: { id: string; name: string } | undefined, second: { id: string; name: string } | undefined, plugin = 'tool-fs') {
  const { root } = await createRegistry()
  await root.plugin(registeringPlugin(plugin, (ctx) => { ctx.tools.register({ ...echo, name: 'read' }) }, first))
  let caught: Refusal | undefined
  const fiber = root.plugin(registeringPlugin('clash-builtin', (ctx) => {
    caught = refusal(() => ctx.tools.register({ ...echo, name: 'read', description: 'my read' }))
  }, second))
  await fiber
  expect(root.tools.get('read')?.description).toBe(echo.description)
  return caught!
}

describe('a name or key another plugin has', () => {
  it('a tool name clash names the row that registered the tool first and says to rename it or remove a row', async () => {
    const error = await clash({ id: 'fs', name: '@rein/tool-fs' }, { id: 't', name: './clash-builtin.mjs' })
    expect(error.code).toBe('DUPLICATE_TOOL')
    expect(error.message).toBe('a tool named "read" is already registered by row "fs" (@rein/tool-fs); give this tool another name, or remove one of the two rows')
    expect(error.details).toEqual({ tool: 'read', owner: 'row "fs" (@rein/tool-fs)' })
  })

  it('a tool name clash outside cordis.yml names the plugin that registered the tool first', async () => {
    const error = await clash(undefined, undefined)
    expect(error.message).toBe('a tool named "read" is already registered by plugin "tool-fs"; give this tool another name, or dispose the first registration before registering this one')
  })

  it('a tool registered twice by one plugin says so', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    expect(refusal(() => tools.register(echo)).message).toBe('a tool named "echo" is already registered by plugin "test-owner" itself; register it once, or dispose the first registration before registering it again')
  })

  it('a run field contributed twice names the row that contributes it first', async () => {
    const { root } = await createRegistry()
    await root.plugin(registeringPlugin('read-tracker', (ctx) => { ctx.tools.contribute('readsSeen', () => undefined) }, { id: 'reads', name: 'rein-read-tracker' }))
    let caught: Refusal | undefined
    await root.plugin(registeringPlugin('other', (ctx) => { caught = refusal(() => ctx.tools.contribute('readsSeen', () => undefined)) }))
    expect(caught?.code).toBe('DUPLICATE_CONTRIBUTION')
    expect(caught?.message).toBe('row "reads" (rein-read-tracker) already contributes "readsSeen" to tool runs; one provider per key: contribute a field of another name, or load only one of the two')
  })
})

declare module '../src/index.ts' {
  interface ToolRunFields {
    readsSeen: unknown
  }
}

describe('a definition field that is wrong', () => {
  it.each([
    ['no definition', undefined, 'tool: register() needs a tool definition, the object defineTool({...}) returns, but got undefined (check the import)'],
    ['no output', { ...echo, output: undefined }, 'tool "echo": output is required but missing; add output: {schema, render}, e.g. {schema: {type: \'string\'}, render: (args, value) => value}'],
    ['a name with a space', { ...echo, name: 'my tool!' }, 'tool "my tool!": name must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"; e.g. "my_tool"'],
    ['a name with accented letters suggests them without the accents, not dropped', { ...echo, name: 'café_recherche' }, 'tool "café_recherche": name must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"; e.g. "cafe_recherche"'],
    ['no name', { ...echo, name: undefined }, 'tool: name must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-", but got undefined'],
    ['jsonSchema(null) as parameters', { ...echo, parameters: jsonSchema(null as never) }, 'tool "echo": parameters: $: jsonSchema() needs a JSON Schema object, but got null'],
    ['no description', { ...echo, description: undefined }, 'tool "echo": description must be a non-empty string saying what the tool does and when to use it (the model reads it), but got undefined'],
    ['execute not a function', { ...echo, execute: 'run' }, 'tool "echo": execute must be a function, (args, run) => value, but got "run"'],
    ['render not a function', { ...echo, output: { schema: echo.output.schema } }, 'tool "echo": output.render must be a function, (args, value) => a string or content parts, but got undefined'],
    ['replaySafe not a boolean', { ...echo, replaySafe: 'yes' }, 'tool "echo": replaySafe must be true or false, but got "yes"'],
    ['summarize not a function', { ...echo, summarize: 'short' }, 'tool "echo": summarize must be a function, but got "short"'],
    ['no parameters', { ...echo, parameters: undefined }, 'tool "echo": parameters: $: parameters is missing; give a map of property specs ({} for a tool that takes no arguments)'],
    ['a property spec that is a type name', { ...echo, parameters: { text: 'string' } }, 'tool "echo": parameters: $.properties.text: a value spec must be an object such as {type: \'string\'}, but got "string"'],
    ['a property spec with no type', { ...echo, parameters: { text: { description: 'the text' } } }, 'tool "echo": parameters: $.properties.text: a value spec needs a "type" (one of string, number, integer, boolean, null, array, object, json) or "oneOf"'],
    ['an object spec with no additionalProperties', { ...echo, parameters: { o: { type: 'object', properties: {} } } }, 'tool "echo": parameters: $.properties.o: an object must declare additionalProperties: true or false (false refuses keys not in properties, true lets any through)'],
    ['required: false', { ...echo, parameters: { text: { type: 'string', required: false } } }, 'tool "echo": parameters: $.properties.text: "required" must be true or left out (leave it out for an optional property), but got false'],
  ])('a refused definition names the tool, the field, what was wrong and what to do (%s)', async (_label, definition, message) => {
    const error = await definitionRefusal(definition)
    expect(error.code).toBe('INVALID_TOOL_DEFINITION')
    expect(error.message).toBe(message)
  })

  it.each([
    ['effect for effects', { ...echo, effect: ['write'] }, 'tool "echo": unknown key "effect" (did you mean "effects"?)'],
    ['a misspelled flag', { ...echo, isConcurentSafe: true }, 'tool "echo": unknown key "isConcurentSafe" (did you mean "isConcurrencySafe"?)'],
    ['a required list beside parameters', { ...echo, required: ['text'] }, 'tool "echo": unknown key "required": a definition has no required list; mark each required argument in parameters with required: true, e.g. {text: {type: \'string\', required: true}}'],
    ['needsApproval', { ...echo, needsApproval: true }, 'tool "echo": unknown key "needsApproval": approval follows from effects; declare what the tool does, e.g. effects: [\'write\'] (write and exec are asked about by default)'],
    ['a misspelled output key', { ...echo, output: { ...echo.output, rendr: () => 'x' } }, 'tool "echo": output: unknown key "rendr" (did you mean "render"?)'],
  ])('an unknown key in a definition is refused, not ignored, naming it and the key meant (%s)', async (_label, definition, message) => {
    const error = await definitionRefusal(definition)
    expect(error.code).toBe('INVALID_TOOL_DEFINITION')
    expect(error.message).toBe(message)
    expect(error.details).toMatchObject({ tool: 'echo' })
  })

  it('an unknown key with no near one lists the keys a definition takes', async () => {
    const error = await definitionRefusal({ ...echo, colour: 'red' })
    expect(error.message).toMatch(/^tool "echo": unknown key "colour" \(a definition takes name, description, parameters, output, execute, .*availableTo, variants, variantFor\)$/)
    expect(error.details).toMatchObject({ tool: 'echo', field: 'colour' })
  })

  it('an unknown output key with no near one lists the keys output takes', async () => {
    const error = await definitionRefusal({ ...echo, output: { ...echo.output, colour: 'red' } })
    expect(error.message).toBe('tool "echo": output: unknown key "colour" (output takes schema, render, presentationMeta)')
    expect(error.details).toEqual({ tool: 'echo', field: 'output', key: 'colour' })
  })

  it('isConcurrencySafe that is neither a boolean nor a function is refused', async () => {
    const error = await definitionRefusal({ ...echo, isConcurrencySafe: 'yes' })
    expect(error.message).toBe('tool "echo": isConcurrencySafe must be true, false or a function (args) => boolean, but got "yes"')
  })

  it('every key the ToolDefinition type has is accepted', async () => {
    const { tools } = await createRegistry()
    const full: Required<AnyToolDefinition> = {
      ...(echo as unknown as AnyToolDefinition),
      output: { ...(echo.output as unknown as AnyToolDefinition['output']), presentationMeta: () => null },
      isConcurrencySafe: () => true, effects: ['read'], replaySafe: true, recover: () => undefined, recoverAfterInterrupt: true,
      timeoutMs: 1000, cancelGraceMs: 10, presentCall: () => undefined, presentResult: () => undefined, summarize: () => 'x', availableTo: () => true,
      variants: { narrow: { description: 'Narrow.' } }, variantFor: () => 'narrow',
    }
    tools.register(full)
    expect(tools.list()).toEqual(['echo'])
  })

  it('a schema refusal is not logged a second time without the tool\'s name (cordis logs an error\'s cause before it)', async () => {
    const error = await definitionRefusal(withParameters({ text: { type: 'string', requird: true } }))
    expect(error.cause).toBeUndefined()
    expect(error.details).toMatchObject({ tool: 't', field: 'parameters', path: '$.properties.text', key: 'requird' })
  })
})

describe('a body or a render that gives nothing usable', () => {
  it('a body that returns nothing says so and that execute must return a value matching output.schema', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'undef', description: 'Returns nothing.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => undefined as unknown as string,
    }))
    const result = await tools.execute(call('undef', {}))
    expect(result.isError && result.error).toEqual({
      code: 'INVALID_TOOL_OUTPUT',
      message: 'undef returned nothing (undefined); a tool must return a value matching its output schema',
    })
  })

  it.each([
    [42, 'a number'],
    [{ text: 'hi' }, 'an object'],
    [undefined, 'undefined'],
  ])('a render that returns %j says what it returned and what it must return', async (rendered, got) => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'r', description: 'Renders badly.', parameters: {},
      output: { schema: { type: 'null' }, render: () => rendered as unknown as string }, execute: () => null,
    }))
    const result = await tools.execute(call('r', {}))
    expect(result.isError && result.error).toEqual({
      code: 'TOOL_FAILED',
      message: `r could not render its result: output.render returned ${got}; it must be a string or an array of content parts ({type: 'text', text})`,
    })
  })
})

describe('a post-execute hook that gives a wrong value or content', () => {
  // The value a hook gives is its own: a message that says "echo returned …" sends the tool's
  // author to a body that did nothing wrong.
  const picky = defineTool({
    name: 'picky', description: 'Renders only non-empty text.', parameters: {},
    output: {
      schema: { type: 'object', additionalProperties: false, properties: { text: { type: 'string', required: true } } },
      render: (_args, value) => { if (value.text === '') throw new Error('nothing to render'); return value.text },
    },
    execute: () => ({ text: 'fine' }),
  })
  const hook = 'the post-execute hook "redact" of row "audit" (rein-audit)'
  const keep = 'or return nothing to keep the result'

  it.each([
    ['replaces the value with nothing (undefined)', undefined, 'INVALID_TOOL_OUTPUT',
      `picky: ${hook} replaced the value with nothing (undefined); give a value matching picky's output schema, ${keep}`],
    ['replaces the value with one that is not JSON', { text: 'x', at: new Date(0) }, 'INVALID_TOOL_OUTPUT',
      `picky: ${hook} replaced the value with one that is not JSON: `],
    ['replaces the value with one that does not match the output schema', { wrong: 1 }, 'INVALID_TOOL_OUTPUT',
      `picky: ${hook} replaced the value with one that does not match picky's output schema: `],
    ['replaces the value with one the tool cannot render', { text: '' }, 'TOOL_FAILED',
      `picky: ${hook} replaced the value with one picky could not render (nothing to render); give a value picky's output.render accepts, ${keep}`],
  ])('a hook that %s is blamed by name and row, not the tool\'s body', async (_what, value, code, message) => {
    const { root } = await createRegistry()
    await root.plugin(registeringPlugin('picky-tool', (ctx) => { ctx.tools.register(picky) }))
    const redact = () => ({ kind: 'replace-value' as const, value: value as never })
    await root.plugin(registeringPlugin('audit-hooks', (ctx) => { ctx.tools.postExecute(redact) }, { id: 'audit', name: 'rein-audit' }))
    const result = await root.tools.execute(call('picky', {}))
    expect(result.isError && result.error.code).toBe(code)
    expect(result.isError && result.error.message).toContain(message)
    expect(result.isError && result.error.message).not.toMatch(/picky returned|could not render its result/)
    expect(result.isError && result.error.message).toMatch(/give a value .*, or return nothing to keep the result$/)
  })

  it('a hook that replaces the content with something other than content is blamed by name and row', async () => {
    const { root } = await createRegistry()
    await root.plugin(registeringPlugin('picky-tool', (ctx) => { ctx.tools.register(picky) }))
    const redact = () => ({ kind: 'replace-content' as const, content: { text: 'x' } as never })
    await root.plugin(registeringPlugin('audit-hooks', (ctx) => { ctx.tools.postExecute(redact) }, { id: 'audit', name: 'rein-audit' }))
    const result = await root.tools.execute(call('picky', {}))
    expect(result.isError && result.error).toEqual({
      code: 'BLOCKED',
      message: `picky: ${hook} gave invalid content: its replace-content is an object; it must be a string or an array of content parts ({type: 'text', text})`,
    })
  })

  it('an anonymous hook outside cordis.yml is named by the plugin that registered it', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.postExecute(() => ({ kind: 'replace-value', value: undefined as never }))
    const result = await tools.execute(call('echo', { text: 'x' }))
    expect(result.isError && result.error.message).toBe(`echo: a post-execute hook of plugin "test-owner" replaced the value with nothing (undefined); give a value matching echo's output schema, ${keep}`)
  })
})
