/**
 * The parameter DSL: a compact, typed way to write a tool's schema. `compileValue` turns it into
 * the JSON Schema subset; the `Infer*` types give `execute` its argument and return types.
 */

import { ReinError, childPath, closest, type JsonPrimitive, type JsonValue } from '@rein/base'
import type { JsonSchema } from './json-schema.ts'
import { FORMAT_REFUSAL } from './schema-check.ts'
import { shown } from './author-hints.ts'

/** JSON as a literal in source: `as const` and `const` type parameters make arrays and objects read-only. */
type JsonLiteral = JsonPrimitive | readonly JsonLiteral[] | { readonly [key: string]: JsonLiteral }

interface Annotated<T> {
  description?: string
  title?: string
  /** Parameters only: the value a missing property gets; it must match this spec. */
  default?: T
  /** Sample values shown to the model; each must match this spec. */
  examples?: readonly T[]
}

/** A string parameter or value, with the JSON Schema keywords rein checks. */
export interface StringSpec extends Annotated<string> {
  type: 'string'
  enum?: readonly string[]
  const?: string
  minLength?: number
  maxLength?: number
  /** A regular expression the string must contain a match of (anchor it with `^…$` for the whole string); run with the `u` flag. */
  pattern?: string
}
/** A number or integer parameter or value, with its bounds. */
export interface NumberSpec extends Annotated<number> {
  type: 'number' | 'integer'
  enum?: readonly number[]
  const?: number
  minimum?: number
  maximum?: number
}
/** A boolean parameter or value. */
export interface BooleanSpec extends Annotated<boolean> {
  type: 'boolean'
  const?: boolean
}
/** A value that is always `null`. */
export interface NullSpec extends Annotated<null> {
  type: 'null'
}
/** A list of values of one spec, with its length bounds. */
export interface ArraySpec extends Annotated<readonly JsonLiteral[]> {
  type: 'array'
  items: ValueSpec
  minItems?: number
  maxItems?: number
}
/** An object with declared properties; unknown keys are refused or allowed, as declared. */
export interface ObjectSpec extends Annotated<{ readonly [key: string]: JsonLiteral }> {
  type: 'object'
  properties: PropertiesSpec
  /** Must be declared: `false` rejects unknown keys, `true` lets any JSON through. */
  additionalProperties: boolean
}
/** Any JSON value; infers `JsonValue`. */
export interface JsonSpec extends Annotated<JsonLiteral> {
  type: 'json'
}
/** Exactly one branch must match. */
export interface OneOfSpec extends Annotated<JsonLiteral> {
  oneOf: readonly [ValueSpec, ValueSpec, ...ValueSpec[]]
}

/** Any value spec: what `parameters` properties and `output.schema` are written in. */
export type ValueSpec = StringSpec | NumberSpec | BooleanSpec | NullSpec | ArraySpec | ObjectSpec | JsonSpec | OneOfSpec
/** A property: a value spec, required only when marked `required: true`; one with a `default` is never missing. */
export type PropertySpec = ValueSpec & { required?: true }
/** A tool's `parameters`: its properties by name. */
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

/** Keys always present: marked required, or filled in from a default when the model leaves them out. */
type RequiredKeys<P> = { [K in keyof P]: P[K] extends { required: true } | { default: unknown } ? K : never }[keyof P]

/** The object type a properties map accepts. */
export type InferProperties<P, Depth extends unknown[] = []> = Simplify<
  { [K in RequiredKeys<P>]: InferValue<P[K], Depth> } & { [K in Exclude<keyof P, RequiredKeys<P>>]?: InferValue<P[K], Depth> }
>

const COMMON_KEYS = ['type', 'description', 'title', 'default', 'examples']
const KEYS: Record<string, readonly string[]> = {
  string: [...COMMON_KEYS, 'enum', 'const', 'minLength', 'maxLength', 'pattern'],
  number: [...COMMON_KEYS, 'enum', 'const', 'minimum', 'maximum'],
  integer: [...COMMON_KEYS, 'enum', 'const', 'minimum', 'maximum'],
  boolean: [...COMMON_KEYS, 'const'],
  null: COMMON_KEYS,
  array: [...COMMON_KEYS, 'items', 'minItems', 'maxItems'],
  object: [...COMMON_KEYS, 'properties', 'additionalProperties'],
  json: COMMON_KEYS,
}
const ONE_OF_KEYS = ['oneOf', 'description', 'title', 'default', 'examples']
const VALUE_TYPES = Object.keys(KEYS)
/** Keys copied to the schema as they are; the structural ones are compiled. */
const COPIED = ['title', 'description', 'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'default', 'examples']

/**
 * Compiles a value spec to JSON Schema; throws `INVALID_SCHEMA` with the path of a malformed node,
 * and for a key the DSL does not know, its name and the nearest one it does.
 */
export function compileValue(spec: unknown, path = '$', property = false): JsonSchema {
  const fail = (message: string, key?: string): never => {
    throw new ReinError('INVALID_SCHEMA', `${path}: ${message}`, { details: key === undefined ? { path } : { path, key } })
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) return fail(`a value spec must be an object such as {type: 'string'}, but got ${shown(spec)}`)
  const node = spec as Record<string, unknown>
  const out: Record<string, unknown> = {}
  if ('oneOf' in node) {
    checkKeys(node, ONE_OF_KEYS, 'oneOf', property, fail)
    if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) fail('"oneOf" needs at least two branches')
    copyKeys(node, out, COPIED)
    out.oneOf = (node.oneOf as unknown[]).map((branch, i) => compileValue(branch, `${path}.oneOf[${i}]`))
    return out as JsonSchema
  }
  const type = node.type
  if (type === undefined) return fail(`a value spec needs a "type" (one of ${VALUE_TYPES.join(', ')}) or "oneOf"`)
  if (typeof type !== 'string' || !Object.hasOwn(KEYS, type)) {
    return fail(`unknown type ${JSON.stringify(type)} (use one of ${VALUE_TYPES.join(', ')}, or oneOf)`)
  }
  checkKeys(node, KEYS[type]!, type, property, fail)
  if (type !== 'json') out.type = type
  copyKeys(node, out, COPIED)
  if (type === 'array') out.items = compileValue(node.items, `${path}.items`)
  if (type === 'object') {
    if (typeof node.additionalProperties !== 'boolean') fail('an object must declare additionalProperties: true or false (false refuses keys not in properties, true lets any through)')
    Object.assign(out, compileProperties(node.properties, path))
    out.additionalProperties = node.additionalProperties
  }
  return out as JsonSchema
}

/** Every key of `node` must be one `kind` takes; a wrong one is named with the nearest right one. */
function checkKeys(node: Record<string, unknown>, allowed: readonly string[], kind: string, property: boolean, fail: (message: string, key: string) => never) {
  const here = property ? [...allowed, 'required'] : allowed
  for (const key of Object.keys(node)) {
    if (here.includes(key)) continue
    if (key === 'required') fail(misplacedRequired(node.required), key)
    if (key === 'format') fail(FORMAT_REFUSAL, key)
    if (key === '$schema') fail(`"$schema" belongs to a JSON Schema; a value spec has none: drop it (or ${VIA_JSON_SCHEMA})`, key)
    const owners = VALUE_TYPES.filter((type) => KEYS[type]!.includes(key))
    if (owners.length > 0) {
      if (kind === 'oneOf') fail(`"${key}" does not go beside oneOf; put it in the branches`, key)
      fail(`"${key}" does not apply to type "${kind}" (it is for ${listOr(owners)})`, key)
    }
    const near = closest(key, here)
    fail(`unknown key "${key}" ${near ? `(did you mean "${near}"?)` : `(allowed here: ${here.join(', ')})`}`, key)
  }
}

const VIA_JSON_SCHEMA = 'pass a JSON Schema through jsonSchema() from @rein/tools'

/** `required` where it means nothing: a JSON Schema habit (a list on the object) or a misplaced mark. */
function misplacedRequired(value: unknown): string {
  if (Array.isArray(value)) return `"required" is a list in JSON Schema; in a value spec, mark each required property with required: true instead (or ${VIA_JSON_SCHEMA})`
  return '"required" marks a property of an object; it means nothing here'
}

function listOr(items: string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} or ${items.at(-1)!}`
}

/** Compiles a properties map to `{properties, required}`; `required` keeps declaration order. */
export function compileProperties(properties: unknown, path = '$'): Pick<JsonSchema, 'properties' | 'required'> {
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new ReinError('INVALID_SCHEMA', `${path}.properties: must be an object of property specs, but got ${shown(properties)}`, { details: { path } })
  }
  const compiled: Record<string, JsonSchema> = {}
  const required: string[] = []
  for (const [key, property] of Object.entries(properties)) {
    const propertyPath = childPath(`${path}.properties`, key)
    const isRequired = (property as Record<string, unknown> | null)?.required
    if (isRequired !== undefined && isRequired !== true) {
      throw new ReinError('INVALID_SCHEMA', `${propertyPath}: "required" must be true or left out (leave it out for an optional property), but got ${shown(isRequired)}`, { details: { path: propertyPath, key: 'required' } })
    }
    if (isRequired) required.push(key)
    compiled[key] = compileValue(property, propertyPath, true)
  }
  return required.length ? { properties: compiled, required } : { properties: compiled }
}

function copyKeys(from: Record<string, unknown>, to: Record<string, unknown>, keys: string[]) {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key]
}
