/**
 * What a tool's schema may contain, checked once at registration so a schema the validator cannot
 * honour never reaches a model. The DSL compiles to a schema that goes through the same check.
 */

import { ReinError, childPath, closest } from '@rein/base'
import { compilePattern, matchesType, validateJson, type JsonSchema } from './json-schema.ts'
import { applyDefaults } from './schema-defaults.ts'

/** Where a schema is used: `default` only means something in parameters. */
export type SchemaUse = 'parameters' | 'output'

/** Shared with the DSL, so both say the same. */
export const FORMAT_REFUSAL = '"format" is not supported: rein does not check it; use "pattern" with a regular expression instead'

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'])
const BOUNDS: Record<string, string> = {
  minimum: 'number', maximum: 'number',
  minLength: 'string', maxLength: 'string', pattern: 'string',
  minItems: 'array', maxItems: 'array',
}
const KEYWORDS = [
  'type', 'description', 'title', 'default', 'examples', 'enum', 'const', 'properties', 'required',
  'additionalProperties', 'items', 'oneOf', ...Object.keys(BOUNDS),
]

interface Place {
  path: string
  use: SchemaUse
  /** The node is the value of `properties[key]`, the only place a default applies. */
  property: boolean
  underOneOf: boolean
}

/**
 * Throws `INVALID_SCHEMA` naming the path of the first keyword or shape outside the subset, a
 * `pattern` that does not compile, or a `default` or example the schema itself would reject.
 */
export function assertSupportedSchema(schema: unknown, use: SchemaUse, path = '$'): asserts schema is JsonSchema {
  check(schema, { path, use, property: false, underOneOf: false })
}

function check(schema: unknown, place: Place): void {
  const { path } = place
  const fail = (message: string, details: Record<string, unknown> = {}): never => {
    throw new ReinError('INVALID_SCHEMA', `${path}: ${message}`, { details: { path, ...details } })
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) fail('a schema must be an object')
  const node = schema as Record<string, unknown>
  for (const key of Object.keys(node)) {
    if (KEYWORDS.includes(key)) continue
    if (key === 'format') fail(FORMAT_REFUSAL, { key })
    if (key === '$schema') fail('"$schema" is not needed: rein reads every schema as the JSON Schema subset it supports; drop it', { key })
    const near = closest(key, KEYWORDS)
    fail(`keyword "${key}" is not supported ${near ? `(did you mean "${near}"?)` : `(supported: ${KEYWORDS.join(', ')})`}`, { key })
  }
  const type = node.type as string | undefined
  if (type !== undefined && !TYPES.has(type)) fail(`type ${JSON.stringify(type)} is not supported`)
  for (const key of ['description', 'title'] as const) {
    if (node[key] !== undefined && typeof node[key] !== 'string') fail(`"${key}" must be a string`)
  }
  for (const [key, applies] of Object.entries(BOUNDS)) {
    const bound = node[key]
    if (bound === undefined) continue
    if (!(applies === 'number' ? type === 'number' || type === 'integer' : type === applies)) fail(`"${key}" applies to type "${applies}" only`)
    if (key === 'pattern') {
      if (typeof bound !== 'string') fail('"pattern" must be a string')
      checkPattern(bound as string, fail)
    } else if (applies === 'number') {
      if (typeof bound !== 'number' || !Number.isFinite(bound)) fail(`"${key}" must be a finite number`)
    } else if (!Number.isSafeInteger(bound) || (bound as number) < 0) fail(`"${key}" must be a non-negative integer`)
  }
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum) || node.enum.length === 0) fail('"enum" must be a non-empty array')
    ;(node.enum as unknown[]).forEach((value, i) => {
      if (type !== undefined && !matchesType(type, value)) fail(`enum[${i}] ${JSON.stringify(value)} is not of type "${type}"`)
    })
  }
  if (node.const !== undefined && type !== undefined && !matchesType(type, node.const)) fail(`"const" is not of type "${type}"`)
  checkObject(node, place, fail)
  if (node.items !== undefined) {
    if (type !== 'array') fail('"items" needs type "array"')
    check(node.items, { ...place, path: `${path}.items`, property: false })
  }
  if (node.oneOf !== undefined) {
    if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) fail('"oneOf" needs at least two branches')
    ;(node.oneOf as unknown[]).forEach((branch, i) => check(branch, { ...place, path: `${path}.oneOf[${i}]`, property: false, underOneOf: true }))
  }
  // After the children, so a default is judged with its nested defaults already known to be sound.
  checkDefault(node as JsonSchema, place, fail)
  if (node.examples !== undefined) {
    if (!Array.isArray(node.examples)) fail('"examples" must be an array')
    ;(node.examples as unknown[]).forEach((example, i) => {
      const issues = validateJson(node as JsonSchema, example)
      if (issues.length > 0) fail(`examples[${i}] does not match the schema: ${describe(issues)}`)
    })
  }
}

function checkPattern(pattern: string, fail: (message: string) => never) {
  if (compilePattern(pattern)) return
  let reason = ''
  try {
    new RegExp(pattern, 'u')
  } catch (error) {
    reason = ` (${(error as Error).message})`
  }
  fail(`"pattern" is not a valid regular expression with the u flag${reason}`)
}

function checkObject(node: Record<string, unknown>, place: Place, fail: (message: string) => never) {
  if (node.properties === undefined && node.required === undefined && node.additionalProperties === undefined) return
  if (node.type !== 'object') fail('"properties", "required" and "additionalProperties" need type "object"')
  if (node.additionalProperties !== undefined && typeof node.additionalProperties !== 'boolean') {
    fail('"additionalProperties" must be true or false (schemas there are not supported)')
  }
  const properties = node.properties
  if (properties !== undefined && (typeof properties !== 'object' || properties === null || Array.isArray(properties))) {
    fail('"properties" must be an object')
  }
  const declared = (properties ?? {}) as Record<string, unknown>
  for (const [key, child] of Object.entries(declared)) {
    check(child, { ...place, path: childPath(`${place.path}.properties`, key), property: true })
  }
  if (node.required === undefined) return
  if (!Array.isArray(node.required) || node.required.some((key) => typeof key !== 'string')) fail('"required" must be an array of strings')
  for (const key of node.required as string[]) {
    if (!Object.hasOwn(declared, key)) fail(`required property "${key}" is not declared in "properties"`)
    if ((declared[key] as JsonSchema).default !== undefined) {
      const path = childPath(`${place.path}.properties`, key)
      throw new ReinError('INVALID_SCHEMA', `${path}: a required property cannot have a default (the model must send it, so the default would never apply); drop one`, { details: { path } })
    }
  }
}

function checkDefault(node: JsonSchema, place: Place, fail: (message: string) => never) {
  if (node.default === undefined) return
  if (place.use === 'output') fail('"default" is only for parameters (a tool\'s output is what execute returns)')
  if (place.underOneOf) fail('"default" inside oneOf is ambiguous; put it on the property that holds the oneOf')
  if (!place.property) fail('"default" applies only to a property of an object')
  const issues = validateJson(node, applyDefaults(node, node.default))
  if (issues.length > 0) fail(`"default" does not match its own schema: ${describe(issues)}`)
}

function describe(issues: { path: string; message: string }[]): string {
  return issues.slice(0, 3).map((issue) => `${issue.path}: ${issue.message}`).join('; ')
}
