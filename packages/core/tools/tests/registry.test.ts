import { Context } from '@deepseek-ai/cordis'
import { isFrozenJson, toFrozenJson, type JsonValue } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { ToolRegistry, defineTool, jsonSchema, type JsonSchema } from '../src/index.ts'
import { call, createRegistry, echo } from './fixtures.ts'

const named = (name: string, description = `The ${name} tool.`) => defineTool({
  name,
  description,
  parameters: { q: { type: 'string', required: true }, n: { type: 'number' } },
  output: { schema: { type: 'null' }, render: () => 'ok' },
  execute: () => null,
})

describe('ToolRegistry registration', () => {
  it('removes a tool when its disposer runs', async () => {
    const { tools } = await createRegistry()
    const dispose = tools.register(echo)
    expect(tools.list()).toEqual(['echo'])
    await dispose()
    expect(tools.list()).toEqual([])
    expect((await tools.execute(call('echo', { text: 'x' }))).isError).toBe(true)
  })

  it('removes every registration and hook when the owning plugin is disposed', async () => {
    const { root, tools } = await createRegistry()
    const seen: string[] = []
    const plugin = await root.plugin({
      name: 'owner',
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.tools.register(echo)
        ctx.tools.register(named('other'))
        ctx.tools.preExecute(() => ({ kind: 'deny', reason: 'owner says no' }))
        ctx.tools.guard(() => 'guarded')
        ctx.tools.wrapExecute((_call, next) => next())
        ctx.tools.postExecute(() => ({ kind: 'block', feedback: 'blocked' }))
        ctx.tools.onResult((request) => { seen.push(request.toolName) })
      },
    })
    expect(tools.list()).toEqual(['echo', 'other'])
    await plugin.dispose()
    expect(tools.list()).toEqual([])
    expect(tools.schemas()).toEqual([])
    // The hooks left too: a new echo runs unhindered and nobody observes it.
    await root.inject(['tools'], (ctx) => { ctx.tools.register(echo) })
    const result = await tools.execute(call('echo', { text: 'hi' }))
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'hi' }] })
    expect(seen).toEqual([])
  })

  it('refuses a duplicate name and keeps the first registration', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    expect(() => tools.register({ ...echo, description: 'impostor' })).toThrow(expect.objectContaining({ code: 'DUPLICATE_TOOL' }))
    expect(tools.get('echo')?.description).toBe('Repeats the text back.')
  })

  it('lets the name be registered again after the first is disposed', async () => {
    const { tools } = await createRegistry()
    const dispose = tools.register(echo)
    await dispose()
    tools.register({ ...echo, description: 'second' })
    expect(tools.get('echo')?.description).toBe('second')
  })

  it.each([
    [{ ...echo, name: 'has space' }, 'tool "has space": name must be 1-64 characters'],
    [{ ...echo, name: 'x'.repeat(65) }, 'name must be 1-64 characters'],
    [{ ...echo, description: '  ' }, 'tool "echo": description must be a non-empty string'],
    [{ ...echo, timeoutMs: 0 }, 'tool "echo": timeoutMs must be a positive, finite number'],
    [{ ...echo, timeoutMs: Number.POSITIVE_INFINITY }, 'timeoutMs must be a positive, finite number'],
    // setTimeout turns a delay past 2^31 - 1 ms into 1 ms: such a deadline would fire at once.
    [{ ...echo, timeoutMs: 2 ** 31 }, 'tool "echo": timeoutMs must be at most 2147483647 ms (about 24.8 days)'],
    [{ ...echo, output: undefined }, 'tool "echo": output is required'],
    [{ ...echo, parameters: { when: { type: 'date' } } }, 'tool "echo": parameters: $.properties.when: unknown type "date"'],
    [{ ...echo, parameters: jsonSchema({ type: 'object', properties: { at: { type: 'string', format: 'date' } as JsonSchema } }) }, 'tool "echo": parameters: $.properties.at: "format" is not supported'],
    [{ ...echo, parameters: jsonSchema({ type: 'string' }) }, 'parameters: $: a parameters schema must have type "object"'],
    [{ ...echo, output: { ...echo.output, schema: { type: 'object', properties: {} } } }, 'tool "echo": output.schema: $: an object must declare additionalProperties'],
  ])('rejects an invalid definition at registration (%#)', async (definition, message) => {
    const { tools } = await createRegistry()
    expect(() => tools.register(definition as typeof echo)).toThrow(expect.objectContaining({
      code: 'INVALID_TOOL_DEFINITION',
      message: expect.stringContaining(message),
    }))
    expect(tools.list()).toEqual([])
  })
})

describe('ToolRegistry.schemas', () => {
  it('gives only name, description and parameters, sorted by name whatever the load order', async () => {
    const first = await createRegistry()
    first.tools.register(named('zeta'))
    first.tools.register(echo)
    first.tools.register(named('Alpha'))
    const second = await createRegistry()
    second.tools.register(named('Alpha'))
    second.tools.register(named('zeta'))
    second.tools.register(echo)
    const bytes = JSON.stringify(first.tools.schemas())
    expect(JSON.stringify(second.tools.schemas())).toBe(bytes)
    expect(first.tools.schemas().map((schema) => schema.name)).toEqual(['Alpha', 'echo', 'zeta'])
    expect(first.tools.schemas().find((schema) => schema.name === 'echo')).toEqual({
      name: 'echo',
      description: 'Repeats the text back.',
      parameters: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'what to repeat' },
          times: { type: 'integer', minimum: 1, maximum: 3 },
        },
        required: ['text'],
        additionalProperties: false,
      },
    })
    for (const schema of first.tools.schemas()) expect(Object.keys(schema)).toEqual(['name', 'description', 'parameters'])
  })

  it('gives the same list object while the same tools are usable, some hidden or not, so a caller can cache by it', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.register(named('zeta'))
    const visible = (name: string) => name !== 'zeta'
    const narrowed = tools.schemas(visible)
    expect(narrowed.map((schema) => schema.name)).toEqual(['echo'])
    expect(tools.schemas((name) => name !== 'zeta')).toBe(narrowed)
    expect(tools.schemas()).toBe(tools.schemas())
    tools.register(named('alpha'))
    expect(tools.schemas(visible).map((schema) => schema.name)).toEqual(['alpha', 'echo'])
  })

  it('registers a parameters schema nested as deep as a schema may be', async () => {
    const { tools } = await createRegistry()
    const nest = (levels: number): JsonSchema => (levels === 0 ? { type: 'string', enum: ['x'] } : { type: 'object', properties: { a: nest(levels - 1) } })
    const fits = (levels: number) => {
      try {
        toFrozenJson(nest(levels) as JsonValue)
        return true
      } catch {
        return false
      }
    }
    let levels = 1
    while (fits(levels + 1)) levels++
    tools.register(defineTool({ name: 'deep', description: 'Nested to the limit.', parameters: jsonSchema({ type: 'object', properties: { a: nest(levels - 1) } }), output: { schema: { type: 'string' }, render: (_input, value) => value }, execute: () => 'ok' }))
    expect(tools.schemas().map((schema) => schema.name)).toEqual(['deep'])
  })

  it('is frozen, so a caller cannot change what the next request sends', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const schemas = tools.schemas()
    expect(Object.isFrozen(schemas)).toBe(true)
    expect(Object.isFrozen(schemas[0]!.parameters.properties)).toBe(true)
    // Marked as frozen JSON too: a provider caches a list's wire JSON only for such schemas.
    expect(schemas.every(isFrozenJson)).toBe(true)
  })

  it('reflects registrations and disposals immediately', async () => {
    const { tools } = await createRegistry()
    const dispose = tools.register(echo)
    expect(tools.schemas()).toHaveLength(1)
    tools.register(named('b'))
    expect(tools.schemas()).toHaveLength(2)
    await dispose()
    expect(tools.schemas().map((schema) => schema.name)).toEqual(['b'])
  })
})

describe('ToolRegistry as a plugin', () => {
  it('validates its Config', async () => {
    const root = new Context()
    await expect((async () => { await root.plugin(ToolRegistry, { maxArgumentDepth: 'deep' as unknown as number }) })()).rejects.toThrow(/maxArgumentDepth/)
  })

  it('refuses a defaultTimeoutMs that setTimeout cannot hold', async () => {
    const root = new Context()
    await expect((async () => { await root.plugin(ToolRegistry, { defaultTimeoutMs: 2 ** 31 }) })()).rejects.toThrow(/defaultTimeoutMs/)
    await expect((async () => { await root.plugin(ToolRegistry, { defaultTimeoutMs: 0 }) })()).rejects.toThrow(/defaultTimeoutMs/)
  })

  it('applies defaults for every Config field', async () => {
    const root = new Context()
    await root.plugin(ToolRegistry, {})
    expect(root.tools.config).toEqual({ maxArgumentBytes: 1_048_576, maxArgumentDepth: 64, defaultTimeoutMs: 120_000, askFor: ['write', 'exec'] })
  })

  it('disposing the registry takes the service away and back again on reload', async () => {
    const root = new Context()
    const fiber = await root.plugin(ToolRegistry)
    let applied = 0
    await root.plugin({ name: 'user', inject: ['tools'], apply: (ctx: Context) => { applied++; ctx.tools.register(echo) } })
    expect(root.tools.list()).toEqual(['echo'])
    await fiber.dispose()
    expect(root.get('tools')).toBeUndefined()
    await root.plugin(ToolRegistry)
    await new Promise((resolve) => setImmediate(resolve))
    expect(applied).toBe(2)
    expect(root.tools.list()).toEqual(['echo'])
  })
})
