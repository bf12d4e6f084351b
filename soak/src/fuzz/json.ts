/**
 * Random and damaged JSON for the fuzzers: wrong types where a shape is expected, prototype keys,
 * numbers JavaScript cannot hold exactly, deep nesting, long strings.
 */

import type { JsonValue } from '@rein/base'
import type { Rng } from '../plan.ts'
import { randomText } from './bytes.ts'

/** Keys that break code which treats a parsed object as a plain map. */
export const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'] as const

const NUMBERS = [0, -1, 1, 0.5, -0.0, 1e308, -1e308, 2 ** 53, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 1e-320, 4294967296, 2147483648] as const

/** A random JSON value, at most `depth` levels deep; `huge`: sometimes a 100-200 KB string. */
export function randomJson(r: Rng, depth = 3, huge = true): JsonValue {
  const roll = r.int(depth > 0 ? 10 : 6)
  switch (roll) {
    case 0: return null
    case 1: return r.chance(0.5)
    case 2: return r.pick(NUMBERS)
    case 3: return r.int(1000) - 10
    case 4: return randomText(r)
    case 5: return huge && r.chance(0.02) ? 'x'.repeat(100_000 + r.int(100_000)) : ''
    case 6:
    case 7: {
      const out: Record<string, JsonValue> = {}
      for (let i = 0, n = r.int(4); i < n; i++) out[randomKey(r)] = randomJson(r, depth - 1, huge)
      return out
    }
    default: return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1, huge))
  }
}

/** A key: usually a plain word, sometimes a prototype key or odd text. */
function randomKey(r: Rng): string {
  if (r.chance(0.2)) return r.pick(PROTOTYPE_KEYS)
  if (r.chance(0.2)) return randomText(r, 2)
  return r.pick(['index', 'id', 'type', 'function', 'name', 'arguments', 'content', 'delta', 'choices', 'usage', 'error', 'message', 'code', 'k'])
}

/**
 * JSON text nesting `levels` arrays or objects around `inner`. Text, not a value: building a deep
 * value is fine, but JSON.stringify of one overflows the stack long before JSON.parse does.
 */
export function nestedText(levels: number, inner: string, object: boolean): string {
  return object ? `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}` : `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`
}

type Path = (string | number)[]

/** Every path into `value`, the root included. */
function jsonPaths(value: JsonValue, prefix: Path = []): Path[] {
  const out: Path[] = [prefix]
  if (Array.isArray(value)) value.forEach((item, index) => out.push(...jsonPaths(item, [...prefix, index])))
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) out.push(...jsonPaths(item, [...prefix, key]))
  return out
}

/** A copy of `value` with the node at `path` replaced, or removed when `replacement` is undefined. */
function replaceAt(value: JsonValue, path: Path, replacement: JsonValue | undefined): JsonValue | undefined {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    const next = replaceAt(copy[head as number]!, rest, replacement)
    if (next === undefined) copy.splice(head as number, 1)
    else copy[head as number] = next
    return copy
  }
  // defineProperty, not assignment: a key named __proto__ must stay an own key, as JSON.parse makes it.
  const copy: Record<string, JsonValue> = {}
  for (const [key, item] of Object.entries(value as Record<string, JsonValue>)) Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true })
  const next = replaceAt(copy[head as string]!, rest, replacement)
  if (next === undefined) delete copy[head as string]
  else Object.defineProperty(copy, head as string, { value: next, enumerable: true, writable: true, configurable: true })
  return copy
}

/** `value` with one node replaced by a random value, removed, or given an extra (often prototype) key. */
export function mutateJson(r: Rng, value: JsonValue, huge = true): JsonValue {
  const paths = jsonPaths(value)
  const path = r.pick(paths)
  const roll = r.int(4)
  if (roll === 0) return replaceAt(value, path, undefined) ?? null
  if (roll === 1) {
    const target = pathValue(value, path)
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
      const copy: Record<string, JsonValue> = {}
      for (const [key, item] of Object.entries(target)) copy[key] = item
      Object.defineProperty(copy, r.pick(PROTOTYPE_KEYS), { value: randomJson(r, 2, huge), enumerable: true, writable: true, configurable: true })
      return replaceAt(value, path, copy) ?? null
    }
  }
  return replaceAt(value, path, randomJson(r, 2, huge)) ?? null
}

function pathValue(value: JsonValue, path: Path): JsonValue {
  let node: JsonValue = value
  for (const step of path) node = (node as Record<string | number, JsonValue>)[step]!
  return node
}
