/**
 * The JSON Schema subset rein speaks to models: its type, how a value is checked against it
 * (`validateJson`) and its canonical form. What a schema may contain is checked in schema-check.ts.
 */

import { childPath, codePointCount, counted, toFrozenJson, type JsonValue } from '@rein/base'

/** The JSON Schema subset rein accepts, for parameters and tool output alike. (A type, not an interface, so it fits `Record<string, unknown>`.) */
export type JsonSchema = {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object'
  description?: string
  title?: string
  /** Parameters only, on an object's property: filled in when the property is missing. */
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
  /** A regular expression (run with the `u` flag, unanchored) a string must match. */
  pattern?: string
  minItems?: number
  maxItems?: number
}

/** One problem found by validation: where, and what. */
export interface SchemaIssue {
  path: string
  message: string
}

export function matchesType(type: string, value: unknown): boolean {
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

/** JSON equality: the same values, objects compared key by key whatever their order. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]))
  }
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
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
    const length = codePointCount(value)
    if (schema.minLength !== undefined && length < schema.minLength) issue(`must be at least ${counted(schema.minLength, 'character')}`)
    if (schema.maxLength !== undefined && length > schema.maxLength) issue(`must be at most ${counted(schema.maxLength, 'character')}`)
    if (schema.pattern !== undefined) {
      const pattern = compilePattern(schema.pattern)
      if (!pattern) issue(`the schema's pattern ${JSON.stringify(schema.pattern)} is not a valid regular expression`)
      else if (!pattern.test(value)) issue(`must match the pattern ${schema.pattern}`)
    }
  } else if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) issue(`must have at least ${counted(schema.minItems, 'item')}`)
    if (schema.maxItems !== undefined && value.length > schema.maxItems) issue(`must have at most ${counted(schema.maxItems, 'item')}`)
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

const patterns = new Map<string, RegExp | undefined>()

/**
 * A schema's `pattern` as a RegExp, or `undefined` when it does not compile. The `u` flag: code
 * points rather than UTF-16 units, `\p{…}` classes, and strict syntax (the JSON Schema dialect of
 * ECMA-262). No `g` or `y`, so `test` keeps no state between calls. Cached: patterns come from a
 * few tool schemas, and compiling one costs far more than looking it up.
 */
export function compilePattern(pattern: string): RegExp | undefined {
  if (patterns.has(pattern)) return patterns.get(pattern)
  let compiled: RegExp | undefined
  try {
    compiled = new RegExp(pattern, 'u')
  } catch {
    compiled = undefined
  }
  if (patterns.size >= 512) patterns.clear()
  patterns.set(pattern, compiled)
  return compiled
}

const KEYWORD_ORDER = [
  'type', 'title', 'description', 'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern',
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
