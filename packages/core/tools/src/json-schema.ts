/**
 * The JSON Schema subset rein speaks to models: what a tool's schema may contain
 * (`assertSupportedSchema`) and how a value is checked against it (`validateJson`).
 */

import { ReinError, childPath, toFrozenJson, type JsonValue } from '@rein/base'

/** The JSON Schema subset rein accepts, for parameters and tool output alike. (A type, not an interface, so it fits `Record<string, unknown>`.) */
export type JsonSchema = {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object'
  description?: string
  title?: string
  default?: JsonValue
  examples?: JsonValue[]
  enum?: JsonValue[]
  const?: JsonValue
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean
  items?: JsonSchema
  oneOf?: JsonSchema[]
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
}

/** One problem found by validation: where, and what. */
export interface SchemaIssue {
  path: string
  message: string
}

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'])
const ANNOTATIONS = new Set(['description', 'title', 'default', 'examples'])
const BOUNDS: Record<string, string> = {
  minimum: 'number', maximum: 'number',
  minLength: 'string', maxLength: 'string',
  minItems: 'array', maxItems: 'array',
}
const KEYWORDS = new Set([
  'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'oneOf',
  ...ANNOTATIONS, ...Object.keys(BOUNDS),
])

/**
 * Throws `INVALID_SCHEMA` naming the path of the first keyword or shape outside the subset.
 * Run once at registration, so a schema the validator cannot honour never reaches a model.
 */
export function assertSupportedSchema(schema: unknown, path = '$'): asserts schema is JsonSchema {
  const fail = (message: string): never => {
    throw new ReinError('INVALID_SCHEMA', `${path}: ${message}`, { details: { path } })
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) fail('a schema must be an object')
  const node = schema as Record<string, unknown>
  for (const key of Object.keys(node)) {
    if (!KEYWORDS.has(key)) fail(`keyword "${key}" is not supported (supported: ${[...KEYWORDS].join(', ')})`)
  }
  if (node.type !== undefined && !TYPES.has(node.type as string)) fail(`type ${JSON.stringify(node.type)} is not supported`)
  for (const key of ['description', 'title'] as const) {
    if (node[key] !== undefined && typeof node[key] !== 'string') fail(`"${key}" must be a string`)
  }
  for (const [key, type] of Object.entries(BOUNDS)) {
    if (node[key] === undefined) continue
    const applies = type === 'number' ? node.type === 'number' || node.type === 'integer' : node.type === type
    if (!applies) fail(`"${key}" applies to type "${type}" only`)
    if (typeof node[key] !== 'number' || !Number.isFinite(node[key])) fail(`"${key}" must be a finite number`)
  }
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum) || node.enum.length === 0) fail('"enum" must be a non-empty array')
    ;(node.enum as unknown[]).forEach((value, i) => {
      if (node.type !== undefined && !matchesType(node.type as string, value)) {
        fail(`enum[${i}] ${JSON.stringify(value)} is not of type "${node.type as string}"`)
      }
    })
  }
  if (node.const !== undefined && node.type !== undefined && !matchesType(node.type as string, node.const)) {
    fail(`"const" is not of type "${node.type as string}"`)
  }
  if (node.properties !== undefined || node.required !== undefined || node.additionalProperties !== undefined) {
    if (node.type !== 'object') fail('"properties", "required" and "additionalProperties" need type "object"')
  }
  if (node.additionalProperties !== undefined && typeof node.additionalProperties !== 'boolean') {
    fail('"additionalProperties" must be true or false (schemas there are not supported)')
  }
  const properties = node.properties
  if (properties !== undefined) {
    if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) fail('"properties" must be an object')
    for (const [key, child] of Object.entries(properties as object)) {
      assertSupportedSchema(child, childPath(`${path}.properties`, key))
    }
  }
  if (node.required !== undefined) {
    if (!Array.isArray(node.required) || node.required.some((key) => typeof key !== 'string')) fail('"required" must be an array of strings')
    for (const key of node.required as string[]) {
      if (!properties || !Object.hasOwn(properties, key)) fail(`required property "${key}" is not declared in "properties"`)
    }
  }
  if (node.items !== undefined) {
    if (node.type !== 'array') fail('"items" needs type "array"')
    assertSupportedSchema(node.items, `${path}.items`)
  }
  if (node.oneOf !== undefined) {
    if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) fail('"oneOf" needs at least two branches')
    ;(node.oneOf as unknown[]).forEach((branch, i) => assertSupportedSchema(branch, `${path}.oneOf[${i}]`))
  }
}

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string': return typeof value === 'string'
    case 'number': return typeof value === 'number' && Number.isFinite(value)
    case 'integer': return Number.isInteger(value)
    case 'boolean': return typeof value === 'boolean'
    case 'null': return value === null
    case 'array': return Array.isArray(value)
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value)
    default: return false
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'string') return value.length > 40 ? `a string` : JSON.stringify(value)
  return `${typeof value} ${JSON.stringify(value) ?? typeof value}`
}

/** JSON Schema measures strings in code points, so an emoji counts once. */
function codePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Every issue `value` has against `schema`, in document order; empty when valid. */
export function validateJson(schema: JsonSchema, value: unknown, path = '$', issues: SchemaIssue[] = []): SchemaIssue[] {
  const issue = (message: string) => { issues.push({ path, message }) }
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((branch) => validateJson(branch, value, path).length === 0).length
    if (matching !== 1) {
      issue(matching === 0
        ? `${describeValue(value)} matches none of the ${schema.oneOf.length} allowed shapes`
        : `${describeValue(value)} matches more than one allowed shape`)
    }
  }
  if (schema.type !== undefined && !matchesType(schema.type, value)) {
    issue(`expected ${schema.type === 'integer' ? 'an integer' : schema.type === 'array' || schema.type === 'object' ? `an ${schema.type}` : `a ${schema.type}`} but got ${describeValue(value)}`)
    return issues
  }
  if (schema.const !== undefined && !sameJson(schema.const, value)) issue(`expected ${JSON.stringify(schema.const)}`)
  if (schema.enum && !schema.enum.some((option) => sameJson(option, value))) {
    issue(`expected one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')} but got ${describeValue(value)}`)
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) issue(`must be >= ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) issue(`must be <= ${schema.maximum}`)
  } else if (typeof value === 'string') {
    const length = codePoints(value)
    if (schema.minLength !== undefined && length < schema.minLength) issue(`must be at least ${schema.minLength} characters`)
    if (schema.maxLength !== undefined && length > schema.maxLength) issue(`must be at most ${schema.maxLength} characters`)
  } else if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) issue(`must have at least ${schema.minItems} items`)
    if (schema.maxItems !== undefined && value.length > schema.maxItems) issue(`must have at most ${schema.maxItems} items`)
    if (schema.items) value.forEach((item, i) => validateJson(schema.items!, item, childPath(path, i), issues))
  } else if (typeof value === 'object' && value !== null && schema.type === 'object') {
    validateObject(schema, value as Record<string, unknown>, path, issues)
  }
  return issues
}

function validateObject(schema: JsonSchema, value: Record<string, unknown>, path: string, issues: SchemaIssue[]) {
  const properties = schema.properties ?? {}
  for (const key of schema.required ?? []) {
    if (!Object.hasOwn(value, key)) issues.push({ path: childPath(path, key), message: 'missing required property' })
  }
  for (const [key, item] of Object.entries(value)) {
    const child = Object.hasOwn(properties, key) ? properties[key] : undefined
    if (child) validateJson(child, item, childPath(path, key), issues)
    else if (schema.additionalProperties === false) {
      const known = Object.keys(properties)
      issues.push({ path: childPath(path, key), message: `unknown property${known.length ? ` (allowed: ${known.join(', ')})` : ''}` })
    }
  }
}

const KEYWORD_ORDER = [
  'type', 'title', 'description', 'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength',
  'items', 'minItems', 'maxItems', 'properties', 'required', 'additionalProperties', 'oneOf', 'default', 'examples',
]

/**
 * A frozen deep copy with keywords in one fixed order (property order stays the author's).
 * Tool schemas become part of the request prefix, so their bytes must not depend on how they were built.
 */
export function canonicalSchema(schema: JsonSchema): JsonSchema {
  return toFrozenJson(ordered(schema) as JsonValue) as JsonSchema
}

function ordered(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of KEYWORD_ORDER) {
    const value = schema[key as keyof JsonSchema]
    if (value === undefined) continue
    if (key === 'items') out.items = ordered(value as JsonSchema)
    else if (key === 'oneOf') out.oneOf = (value as JsonSchema[]).map(ordered)
    else if (key === 'properties') {
      const entries = Object.entries(value as Record<string, JsonSchema>).map(([name, child]) => [name, ordered(child)])
      out.properties = Object.fromEntries(entries)
    } else out[key] = value
  }
  return out
}
