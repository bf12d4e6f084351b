/**
 * Target (c): raw argument strings into `ctx.tools.execute` for tools with real schemas: random
 * bytes, near-JSON, deep nesting, huge strings and numbers, prototype keys. `execute` must always
 * resolve to a result object (ok or error, never a rejection), a body must only ever receive
 * arguments its schema accepts, and nothing may reach `Object.prototype`.
 */

import { Context } from '@deepseek-ai/cordis'
import { isReinError, type JsonValue } from '@rein/base'
import ToolRegistry, { defineTool, jsonSchema, validateJson, type JsonSchema, type ToolResult } from '@rein/tools'
import { rng, type Rng } from '../plan.ts'
import { randomBytes, randomText } from './bytes.ts'
import { saveInput, savedInputs } from './corpus.ts'
import { PROTOTYPE_KEYS, nestedText, randomJson } from './json.ts'

export interface ToolArgsFigures {
  calls: number
  ok: number
  /** Error results by code. */
  errors: Record<string, number>
  /** `execute` rejected, or resolved to something that is not a result object. */
  stray: number
  /** A body got arguments its schema refuses, or unfrozen ones. */
  invalidReachedBody: number
  /** Object.prototype gained or changed a property. */
  polluted: number
  replayed: number
  saved: string[]
  examples: string[]
}

interface Call {
  name: string
  arguments: string
}

const edit = defineTool({
  name: 'edit',
  description: 'Edits a file (fuzz target).',
  parameters: {
    path: { type: 'string', required: true, minLength: 1, maxLength: 4096, pattern: '^[^\\u0000]+$' },
    edits: {
      type: 'array', required: true, minItems: 1, maxItems: 50,
      items: { type: 'object', additionalProperties: false, properties: { old: { type: 'string', required: true }, new: { type: 'string', required: true }, count: { type: 'integer', minimum: 1, maximum: 100 } } },
    },
    mode: { type: 'string', enum: ['exact', 'fuzzy'], default: 'exact' },
    options: { type: 'object', additionalProperties: true, properties: { dryRun: { type: 'boolean' } } },
    target: { oneOf: [{ type: 'string' }, { type: 'integer', minimum: 0 }] },
    extra: { type: 'json' },
  },
  output: { schema: { type: 'object', additionalProperties: false, properties: { keys: { type: 'integer', required: true } } }, render: (_args, value) => `keys ${value.keys}` },
  execute: (args) => ({ keys: Object.keys(args).length }),
})

const query = defineTool({
  name: 'query',
  description: 'Searches (fuzz target, raw JSON Schema).',
  parameters: jsonSchema({
    type: 'object',
    properties: { q: { type: 'string' }, limit: { type: 'number', minimum: 0, maximum: 1000 }, tags: { type: 'array', items: { type: 'string' } }, at: { type: 'null' } },
    required: ['q'],
    additionalProperties: false,
  }),
  output: { schema: { type: 'string' }, render: (_args, value) => value },
  execute: (args) => `found ${String((args as { q?: unknown }).q).length}`,
})

const ping = defineTool({
  name: 'ping',
  description: 'No parameters (fuzz target).',
  parameters: {},
  output: { schema: { type: 'null' }, render: () => 'pong' },
  execute: () => null,
})

const NAMES = ['edit', 'edit', 'edit', 'edit', 'edit', 'query', 'query', 'query', 'query', 'ping', 'ping', 'unknown_tool', '__proto__', 'constructor', 'toString', ''] as const

/** Arguments its schema accepts, for `name`. */
function validArgs(r: Rng, name: string): Record<string, JsonValue> {
  if (name === 'query') return { q: randomText(r), ...(r.chance(0.5) ? { limit: r.int(1000) } : {}), ...(r.chance(0.3) ? { tags: [randomText(r)] } : {}) }
  if (name === 'ping') return {}
  return {
    path: `src/${randomText(r, 2).replaceAll('\u0000', '')}x`,
    edits: Array.from({ length: 1 + r.int(3) }, () => ({ old: randomText(r), new: randomText(r), ...(r.chance(0.3) ? { count: 1 + r.int(100) } : {}) })),
    ...(r.chance(0.3) ? { mode: r.pick(['exact', 'fuzzy']) } : {}),
    ...(r.chance(0.3) ? { options: { dryRun: r.chance(0.5), [r.pick(PROTOTYPE_KEYS)]: randomJson(r, 2) } } : {}),
    ...(r.chance(0.3) ? { target: r.chance(0.5) ? randomText(r) : r.int(10) } : {}),
    ...(r.chance(0.3) ? { extra: randomJson(r, 3) } : {}),
  }
}

/** Text damage: a character inserted, deleted or swapped, or the string cut. */
function damageText(r: Rng, text: string): string {
  const at = r.int(text.length + 1)
  switch (r.int(5)) {
    case 0: return text.slice(0, at)
    case 1: return text.slice(0, at) + r.pick(['"', '{', '}', '[', ']', ',', ':', '\\', 'u', '\u0000', '\ud800', '1e999', ' ', 'null']) + text.slice(at)
    case 2: return text.slice(0, at) + text.slice(at + 1 + r.int(4))
    case 3: return text.slice(0, at) + text.slice(at, at + 8) + text.slice(at)
    default: return text.replace(/:/, r.pick([':', '::', '=', ': -', ': 01']))
  }
}

/** Raw argument text: mostly near-valid JSON, some noise, some extremes. */
function generate(r: Rng): Call {
  const name = r.pick(NAMES)
  const args = validArgs(r, name === 'query' || name === 'ping' ? name : 'edit')
  const text = JSON.stringify(args)
  const roll = r.int(20)
  let raw: string
  if (roll < 5) raw = text
  else if (roll < 10) raw = damageText(r, text)
  else if (roll === 10) raw = Buffer.from(randomBytes(r, r.int(200))).toString(r.chance(0.5) ? 'utf8' : 'latin1')
  else if (roll === 11) raw = JSON.stringify(randomJson(r, 4))
  else if (roll === 12) {
    // Prototype keys where the schema is closed, open (options), free (extra), and at the top.
    const key = r.pick(PROTOTYPE_KEYS)
    raw = r.pick([
      `{"${key}":{"polluted":1},${text.slice(1)}`,
      text.replace(/}$/, `,"options":{"${key}":{"polluted":1}}}`),
      text.replace(/}$/, `,"extra":{"${key}":{"polluted":1},"a":{"${key}":[1]}}}`),
      `{"constructor":{"prototype":{"polluted":1}},${text.slice(1)}`,
    ])
  } else if (roll === 13) {
    const depth = r.pick([30, 63, 64, 65, 100, 1000, 100_000])
    const deep = nestedText(depth, r.pick(['1', '"x"', '{}', '[]']), r.chance(0.5))
    raw = r.chance(0.3) ? deep : text.replace(/}$/, `,"${r.pick(['extra', 'options', 'path', 'edits', 'q'])}":${deep}}`)
  } else if (roll === 14) {
    const length = r.pick([4096, 4097, 1_048_000, 1_048_577, 3_000_000])
    raw = text.replace(/}$/, `,"extra":"${'a'.repeat(length)}"}`)
  } else if (roll === 15) {
    raw = text.replace(/}$/, `,"extra":${r.pick(['1e400', '-1e400', '9007199254740993', '-0', '1e-400', '0.1e1', '123456789012345678901234567890'])}}`)
  } else if (roll === 16) {
    raw = r.pick(['', ' ', '\n', '\uFEFF{}', 'null', '[]', '"{}"', '0', 'true', '{}', '{"edits":[]}', `${text}${text}`, `${text},`, `{"path":"a","path":1,"edits":[{"old":"a","new":"b"}]}`])
  } else if (roll === 17) {
    raw = text.replace(/}$/, `,"extra":{${Array.from({ length: r.pick([100, 5000]) }, (_, i) => `"k${i}":${i}`).join(',')}}}`)
  } else {
    raw = damageText(r, damageText(r, text))
  }
  return { name, arguments: raw }
}

function isResult(value: unknown): value is ToolResult {
  if (typeof value !== 'object' || value === null) return false
  const result = value as Record<string, unknown>
  if (result.isError === false) return Array.isArray(result.content)
  if (result.isError !== true) return false
  const error = result.error as { code?: unknown; message?: unknown } | undefined
  const content = result.content as { text?: unknown }[] | undefined
  return typeof error?.code === 'string' && error.code !== '' && typeof error.message === 'string' && content?.[0]?.text === `Error: ${error.message}`
}

const prototypeKeys = () => Reflect.ownKeys(Object.prototype).length

/** Runs `count` generated calls (seeded) and every saved one against one registry. */
export async function fuzzToolArgs(seed: number, count: number): Promise<ToolArgsFigures> {
  const figures: ToolArgsFigures = { calls: 0, ok: 0, errors: {}, stray: 0, invalidReachedBody: 0, polluted: 0, replayed: 0, saved: [], examples: [] }
  const root = new Context()
  const fiber = await root.plugin(ToolRegistry, { askFor: [] })
  const schemas = new Map<string, JsonSchema>()
  const badBodies: string[] = []
  await root.inject(['tools'], (ctx) => {
    for (const tool of [edit, query, ping] as const) {
      const definition = tool as unknown as { execute(args: unknown, run: unknown): unknown }
      ctx.tools.register({
        ...tool,
        execute: (args: never, run: never) => {
          const issues = validateJson(schemas.get(tool.name)!, args as JsonValue)
          if (issues.length > 0 || !Object.isFrozen(args)) badBodies.push(`${tool.name}: ${JSON.stringify(issues).slice(0, 300)}`)
          return definition.execute(args, run)
        },
      } as never)
    }
  })
  for (const schema of root.tools.schemas()) schemas.set(schema.name, schema.parameters as JsonSchema)
  const keys = prototypeKeys()
  const seen = new Set<string>()
  const check = async (call: Call, save: boolean) => {
    figures.calls++
    const before = badBodies.length
    let problem: string | undefined
    try {
      const result: unknown = await root.tools.execute({ callId: `c${figures.calls}`, name: call.name, arguments: call.arguments, signal: new AbortController().signal })
      if (!isResult(result)) {
        figures.stray++
        problem = `not a result: ${JSON.stringify(result)?.slice(0, 300)}`
      } else if (result.isError) figures.errors[result.error.code] = (figures.errors[result.error.code] ?? 0) + 1
      else figures.ok++
    } catch (error) {
      figures.stray++
      problem = `rejected${isReinError(error) ? ` (${error.code})` : ''}: ${error instanceof Error ? error.stack : String(error)}`
    }
    if (badBodies.length > before) {
      figures.invalidReachedBody++
      problem ??= `body got ${badBodies.at(-1)}`
    }
    if (prototypeKeys() !== keys || (Object.prototype as Record<string, unknown>).polluted !== undefined) {
      figures.polluted++
      problem ??= 'Object.prototype changed'
      delete (Object.prototype as Record<string, unknown>).polluted
    }
    if (!problem) return
    if (figures.examples.length < 5) figures.examples.push(`${call.name}(${call.arguments.slice(0, 120)}): ${problem.slice(0, 500)}`)
    const kind = problem.split('\n')[0]!.replace(/\d+/g, 'N').slice(0, 100)
    if (!save || seen.has(kind)) return
    seen.add(kind)
    figures.saved.push(saveInput('tool-args', call.name || 'empty', JSON.stringify(call), '.json'))
  }
  try {
    for (const { bytes } of savedInputs('tool-args')) {
      await check(JSON.parse(bytes.toString('utf8')) as Call, false)
      figures.replayed++
    }
    const r = rng(seed)
    for (let i = 0; i < count; i++) await check(generate(r), true)
  } finally {
    await fiber.dispose()
  }
  return figures
}
