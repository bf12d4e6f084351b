/**
 * Applies `default`: a missing object property that declares one gets it, at any depth, including
 * inside a default just filled in. Registration allows `default` only where this is unambiguous:
 * on an object's property, in parameters, outside `oneOf`.
 */

import type { FrozenJson, JsonObject, JsonValue } from '@rein/base'
import type { JsonSchema } from './json-schema.ts'

const hasDefaultsCache = new WeakMap<JsonSchema, boolean>()

/** Whether any property under `schema` declares a default; cached per (frozen, canonical) schema. */
export function hasDefaults(schema: JsonSchema): boolean {
  let known = hasDefaultsCache.get(schema)
  if (known === undefined) {
    known = search(schema)
    hasDefaultsCache.set(schema, known)
  }
  return known
}

function search(schema: JsonSchema): boolean {
  if (schema.default !== undefined) return true
  if (schema.items && search(schema.items)) return true
  return Object.values(schema.properties ?? {}).some(search)
}

/**
 * `value` with every missing property that has a default filled in. Containers that change are
 * new frozen copies; everything else, `value` included when nothing is missing, is returned as is.
 * Values that do not fit the schema's shape are left for validation to report.
 */
export function applyDefaults<T extends JsonValue | FrozenJson>(schema: JsonSchema, value: T): T {
  if (Array.isArray(value)) {
    const items = schema.items
    if (!items) return value
    let changed = false
    const out = (value as readonly JsonValue[]).map((item) => {
      const filled = applyDefaults(items, item)
      if (filled !== item) changed = true
      return filled
    })
    return (changed ? Object.freeze(out) : value) as T
  }
  if (typeof value !== 'object' || value === null || !schema.properties) return value
  const object = value as JsonObject
  let changed = false
  const entries: [string, JsonValue][] = []
  for (const key of Object.keys(object)) {
    const child = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined
    const item = object[key]!
    const filled = child ? applyDefaults(child, item) : item
    if (filled !== item) changed = true
    entries.push([key, filled])
  }
  for (const [key, child] of Object.entries(schema.properties)) {
    if (child.default === undefined || Object.hasOwn(object, key)) continue
    entries.push([key, applyDefaults(child, child.default)])
    changed = true
  }
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return (changed ? Object.freeze(Object.fromEntries(entries)) : value) as T
}
