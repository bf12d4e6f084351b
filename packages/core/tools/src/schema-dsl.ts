/**
 * The parameter DSL: a compact, typed way to write a tool's schema. `compileValue` turns it into
 * the JSON Schema subset; the `Infer*` types give `execute` its argument and return types.
 */

import { ReinError, childPath, type JsonValue } from '@rein/base'
import type { JsonSchema } from './json-schema.ts'

interface Annotated {
  description?: string
  title?: string
}

export interface StringSpec extends Annotated {
  type: 'string'
  enum?: readonly string[]
  const?: string
  minLength?: number
  maxLength?: number
}
export interface NumberSpec extends Annotated {
  type: 'number' | 'integer'
  enum?: readonly number[]
  const?: number
  minimum?: number
  maximum?: number
}
export interface BooleanSpec extends Annotated {
  type: 'boolean'
  const?: boolean
}
export interface NullSpec extends Annotated {
  type: 'null'
}
export interface ArraySpec extends Annotated {
  type: 'array'
  items: ValueSpec
  minItems?: number
  maxItems?: number
}
export interface ObjectSpec extends Annotated {
  type: 'object'
  properties: PropertiesSpec
  /** Must be declared: `false` rejects unknown keys, `true` lets any JSON through. */
  additionalProperties: boolean
}
/** Any JSON value; infers `JsonValue`. */
export interface JsonSpec extends Annotated {
  type: 'json'
}
/** Exactly one branch must match. */
export interface OneOfSpec extends Annotated {
  oneOf: readonly [ValueSpec, ValueSpec, ...ValueSpec[]]
}

export type ValueSpec = StringSpec | NumberSpec | BooleanSpec | NullSpec | ArraySpec | ObjectSpec | JsonSpec | OneOfSpec
/** A property: a value spec, required only when marked `required: true`. */
export type PropertySpec = ValueSpec & { required?: true }
export type PropertiesSpec = { readonly [key: string]: PropertySpec }

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/**
 * The TypeScript type a value spec accepts. Exact through 10 levels of nesting, `JsonValue` below:
 * the bound keeps inference finite when TypeScript instantiates it with the recursive `ValueSpec`.
 */
export type InferValue<S, Depth extends unknown[] = []> = Depth['length'] extends 10 ? JsonValue
  : S extends { oneOf: readonly (infer B)[] } ? InferValue<B, [...Depth, 0]>
  : S extends { const: infer C } ? C
  : S extends { enum: readonly (infer E)[] } ? E
  : S extends { type: 'string' } ? string
  : S extends { type: 'number' | 'integer' } ? number
  : S extends { type: 'boolean' } ? boolean
  : S extends { type: 'null' } ? null
  : S extends { type: 'array'; items: infer I } ? InferValue<I, [...Depth, 0]>[]
  : S extends { type: 'object'; properties: infer P; additionalProperties: infer A }
    ? A extends true ? Simplify<InferProperties<P, [...Depth, 0]> & { [key: string]: JsonValue }> : InferProperties<P, [...Depth, 0]>
  : S extends { type: 'json' } ? JsonValue
  : never

type RequiredKeys<P> = { [K in keyof P]: P[K] extends { required: true } ? K : never }[keyof P]

/** The object type a properties map accepts. */
export type InferProperties<P, Depth extends unknown[] = []> = Simplify<
  { [K in RequiredKeys<P>]: InferValue<P[K], Depth> } & { [K in Exclude<keyof P, RequiredKeys<P>>]?: InferValue<P[K], Depth> }
>

const VALUE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'array', 'object', 'json'])

/** Compiles a value spec to JSON Schema; throws `INVALID_SCHEMA` with the path of a malformed node. */
export function compileValue(spec: unknown, path = '$'): JsonSchema {
  const fail = (message: string): never => {
    throw new ReinError('INVALID_SCHEMA', `${path}: ${message}`, { details: { path } })
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return fail('a value spec must be an object')
  const node = spec as Record<string, unknown>
  const out: Record<string, unknown> = {}
  if ('oneOf' in node) {
    if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) fail('"oneOf" needs at least two branches')
    copyKeys(node, out, ['title', 'description'])
    out.oneOf = (node.oneOf as unknown[]).map((branch, i) => compileValue(branch, `${path}.oneOf[${i}]`))
    return out as JsonSchema
  }
  const type = node.type
  if (typeof type !== 'string' || !VALUE_TYPES.has(type)) {
    return fail(`unknown type ${JSON.stringify(type)} (use one of ${[...VALUE_TYPES].join(', ')}, or oneOf)`)
  }
  if (type !== 'json') out.type = type
  copyKeys(node, out, ['title', 'description', 'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems'])
  if (type === 'array') out.items = compileValue(node.items, `${path}.items`)
  if (type === 'object') {
    if (typeof node.additionalProperties !== 'boolean') fail('an object must declare additionalProperties: true or false')
    Object.assign(out, compileProperties(node.properties, path))
    out.additionalProperties = node.additionalProperties
  }
  return out as JsonSchema
}

/** Compiles a properties map to `{properties, required}`; `required` keeps declaration order. */
export function compileProperties(properties: unknown, path = '$'): Pick<JsonSchema, 'properties' | 'required'> {
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new ReinError('INVALID_SCHEMA', `${path}.properties: must be an object of property specs`, { details: { path } })
  }
  const compiled: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const [key, property] of Object.entries(properties)) {
    const propertyPath = childPath(`${path}.properties`, key)
    const { required: isRequired, ...value } = property as Record<string, unknown>
    if (isRequired !== undefined && isRequired !== true) {
      throw new ReinError('INVALID_SCHEMA', `${propertyPath}: "required" must be true or left out`, { details: { path: propertyPath } })
    }
    if (isRequired) required.push(key)
    compiled[key] = compileValue(value, propertyPath)
  }
  return required.length ? { properties: compiled, required } : { properties: compiled }
}

function copyKeys(from: Record<string, unknown>, to: Record<string, unknown>, keys: string[]) {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key]
}
