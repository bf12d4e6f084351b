/**
 * Finds the keys of a config that its schemastery schema does not declare, at any depth. schemastery
 * itself keeps unknown keys silently, so a misspelled field would fall back to its default.
 * Where the schema cannot tell (a union nothing matches, `any`, a `!!js` value), nothing is reported.
 */

import { isJsExpr } from '@deepseek-ai/cordis-plugin-loader'
import { closest } from '@rein/base'

/** The parts of a schemastery node the walk reads (see `Schemastery` in @deepseek-ai/schemastery). */
export interface SchemaShape {
  type: string
  dict?: Record<string, SchemaShape>
  inner?: unknown
  list?: SchemaShape[]
  builder?: unknown
}

/** A schemastery schema: callable, it validates and returns the config with its defaults. */
export interface Schemastery extends SchemaShape {
  (data: unknown, options?: { ignore?: (data: unknown) => boolean }): unknown
}

export type ConfigPath = (string | number)[]

export interface UnknownKey {
  path: ConfigPath
  /** The keys the schema declares at that place. */
  known: string[]
  suggestion: string | undefined
}

const MARK = Symbol.for('schemastery')

export function isSchemastery(value: unknown): value is Schemastery {
  return typeof value === 'function' && Reflect.get(value, MARK) === true && typeof Reflect.get(value, 'type') === 'string'
}

/** Every key in `config` that `schema` does not declare, in the order they appear. */
export function unknownKeys(config: unknown, schema: SchemaShape): UnknownKey[] {
  return walk(config, schema, []) ?? []
}

/** `undefined` when the schema describes another kind of value (how a union picks its member). */
function walk(value: unknown, schema: SchemaShape, path: ConfigPath): UnknownKey[] | undefined {
  if (value === null || value === undefined || isJsExpr(value)) return []
  switch (schema.type) {
    case 'object':
    case 'dict':
      return isPlainObject(value) ? walkObject(value, schema, path) : undefined
    case 'intersect':
      return isPlainObject(value) ? walkObject(value, schema, path) : []
    case 'array': {
      if (!Array.isArray(value)) return undefined
      const item = innerOf(schema)
      return item ? value.flatMap((element, index) => walk(element, item, [...path, index]) ?? []) : []
    }
    case 'tuple':
      if (!Array.isArray(value)) return undefined
      return (schema.list ?? []).flatMap((member, index) => walk(value[index], member, [...path, index]) ?? [])
    case 'union':
      return walkUnion(value, schema, path)
    case 'transform':
    case 'lazy': {
      const inner = innerOf(schema)
      return inner ? walk(value, inner, path) : []
    }
    case 'any':
      return []
    default:
      return isPlainObject(value) || Array.isArray(value) ? undefined : []
  }
}

/** The keys an object-like schema declares, and the schemas every key's value must match (a dict's). */
interface ObjectView {
  keys: Map<string, SchemaShape[]>
  values: SchemaShape[]
  open: boolean
}

function walkObject(value: Record<string, unknown>, schema: SchemaShape, path: ConfigPath): UnknownKey[] {
  const view = viewOf(schema)
  if (!view) return []
  const known = [...view.keys.keys()]
  return Object.entries(value).flatMap(([key, item]): UnknownKey[] => {
    const schemas = [...(view.keys.get(key) ?? []), ...view.values]
    const at = [...path, key]
    if (schemas.length === 0) return view.open ? [] : [{ path: at, known, suggestion: closest(key, known) }]
    // Two members of an intersect may both describe a key: its value then answers to both at once.
    const [only] = schemas
    return (schemas.length === 1 && only ? walk(item, only, at) : walk(item, { type: 'intersect', list: schemas }, at)) ?? []
  })
}

/** `undefined` when the schema is not a plain composition of objects and dicts: then nothing is judged. */
function viewOf(schema: SchemaShape): ObjectView | undefined {
  switch (schema.type) {
    case 'object':
      return { keys: new Map(Object.entries(schema.dict ?? {}).map(([key, inner]) => [key, [inner]])), values: [], open: false }
    case 'dict': {
      const inner = innerOf(schema)
      return { keys: new Map(), values: inner ? [inner] : [], open: true }
    }
    case 'intersect': {
      const views = (schema.list ?? []).map(viewOf)
      if (views.length === 0 || views.some((view) => view === undefined)) return undefined
      const merged: ObjectView = { keys: new Map(), values: [], open: false }
      for (const view of views) {
        if (!view) continue
        for (const [key, schemas] of view.keys) merged.keys.set(key, [...(merged.keys.get(key) ?? []), ...schemas])
        merged.values.push(...view.values)
        merged.open ||= view.open
      }
      return merged
    }
    case 'transform':
    case 'lazy': {
      const inner = innerOf(schema)
      return inner ? viewOf(inner) : undefined
    }
    default:
      return undefined
  }
}

/**
 * A union is judged by the member the value is meant for: one that accepts it without unknown keys
 * clears it; otherwise the accepting (else merely the same-shaped) member with the fewest unknown keys.
 */
function walkUnion(value: unknown, schema: SchemaShape, path: ConfigPath): UnknownKey[] | undefined {
  const members = (schema.list ?? []).map((member) => ({ issues: walk(value, member, path), valid: accepts(member, value) }))
  if (members.some((member) => member.valid && !member.issues?.length)) return []
  const accepting = members.filter((member) => member.valid && member.issues)
  const pool = (accepting.length > 0 ? accepting : members).flatMap((member) => (member.issues ? [member.issues] : []))
  if (pool.length === 0) return undefined
  return pool.reduce((best, issues) => (issues.length < best.length ? issues : best))
}

function accepts(schema: SchemaShape, value: unknown): boolean {
  if (!isSchemastery(schema)) return false
  try {
    schema(clonePlain(value), { ignore: isJsExpr })
    return true
  } catch {
    return false
  }
}

/** A lazy schema builds its inner schema on first use; until then `inner` is a placeholder. */
function innerOf(schema: SchemaShape): SchemaShape | undefined {
  if (isSchemastery(schema.inner)) return schema.inner
  if (schema.type === 'lazy' && typeof schema.builder === 'function') {
    const built: unknown = schema.builder()
    return isSchemastery(built) ? built : undefined
  }
  return undefined
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * A copy of the plain objects and arrays in `value`: schemastery writes defaults into what it
 * checks. An object met twice (a `!!js` value may hold a cycle, or share one) is copied once.
 */
export function clonePlain(value: unknown, copies = new Map<object, unknown>()): unknown {
  if (!Array.isArray(value) && !isPlainObject(value)) return value
  const known = copies.get(value)
  if (known !== undefined) return known
  if (Array.isArray(value)) {
    const copy: unknown[] = []
    copies.set(value, copy)
    for (const item of value) copy.push(clonePlain(item, copies))
    return copy
  }
  const copy: Record<string, unknown> = {}
  copies.set(value, copy)
  // Defined, not assigned: a `__proto__` key stays a key.
  for (const [key, item] of Object.entries(value)) Object.defineProperty(copy, key, { value: clonePlain(item, copies), enumerable: true, writable: true, configurable: true })
  return copy
}
