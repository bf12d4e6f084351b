/** JSON values and `toFrozenJson`, the lossless deep copy that every durable value passes through. */

import { ReinError } from './rein-error.ts'

export type JsonPrimitive = string | number | boolean | null
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

/** A JSON value frozen all the way down. */
export type FrozenJson<T = JsonValue> = T extends JsonPrimitive
  ? T
  : T extends readonly (infer U)[]
    ? readonly FrozenJson<U>[]
    : { readonly [K in keyof T]: FrozenJson<T[K]> }

export interface ToFrozenJsonOptions {
  /** Deepest nesting accepted; deeper values are rejected rather than risk the stack. Default 256. */
  maxDepth?: number
}

const DEFAULT_MAX_DEPTH = 256

/**
 * Copies `value` as plain JSON and deep-freezes the copy. Rejects, with code `NOT_JSON` and the
 * path of the first offender, anything JSON cannot carry: functions, symbols (as values or keys),
 * `undefined` or holes in arrays, NaN and ±Infinity, BigInt, cycles, and instances of classes
 * (Date, Map, boxed primitives, …). Object properties whose value is `undefined` are omitted, as
 * `JSON.stringify` does; `-0` becomes `0`. Nesting deeper than `maxDepth` → `JSON_TOO_DEEP`.
 */
export function toFrozenJson<T = JsonValue>(value: T, options: ToFrozenJsonOptions = {}): FrozenJson<T> {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
  try {
    return quickCopy(value, new Set(), maxDepth) as FrozenJson<T>
  } catch (error) {
    // The quick copy knows only that something is wrong; this one says where, and throws.
    if (error === UNFIT) return copy(value, '$', new Set(), maxDepth) as FrozenJson<T>
    throw error
  }
}

/*
 * Every durable value passes through here, often more than once on its way to the log (an event's
 * data, then the event). Containers this function made are frozen copies already: they are reused
 * as they are, which also keeps a frozen value's identity (callers cache by it). Each is kept with
 * how deep it nests, so reuse never lets a value past `maxDepth`.
 */
const made = new WeakMap<object, number>()
/** What the quick copy throws at anything it cannot copy; the slow one then reports it. */
const UNFIT = Symbol('unfit')

/** `copy` without paths (they cost a string per node): throws `UNFIT` instead of a report. */
function quickCopy(value: unknown, ancestors: Set<object>, depthLeft: number): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) throw UNFIT
      return value === 0 ? 0 : value
    case 'object': {
      if (value === null) return null
      const height = made.get(value)
      if (height !== undefined) {
        if (height > depthLeft) throw UNFIT
        return value as JsonValue
      }
      if (depthLeft <= 0 || ancestors.has(value)) throw UNFIT
      ancestors.add(value)
      const out = Array.isArray(value) ? quickArray(value, ancestors, depthLeft) : quickObject(value, ancestors, depthLeft)
      ancestors.delete(value)
      return out
    }
    default:
      throw UNFIT
  }
}

function quickArray(value: readonly unknown[], ancestors: Set<object>, depthLeft: number): JsonValue {
  const out: JsonValue[] = []
  let height = 1
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw UNFIT
    const item = quickCopy(value[i], ancestors, depthLeft - 1)
    out.push(item)
    if (typeof item === 'object' && item !== null) height = Math.max(height, made.get(item)! + 1)
  }
  return register(Object.freeze(out) as JsonValue[], height)
}

function quickObject(value: object, ancestors: Set<object>, depthLeft: number): JsonValue {
  const proto = Object.getPrototypeOf(value) as unknown
  if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0) throw UNFIT
  const entries: [string, JsonValue][] = []
  let height = 1
  for (const key of Object.keys(value)) {
    const raw = (value as Record<string, unknown>)[key]
    if (raw === undefined) continue
    const item = quickCopy(raw, ancestors, depthLeft - 1)
    entries.push([key, item])
    if (typeof item === 'object' && item !== null) height = Math.max(height, made.get(item)! + 1)
  }
  // fromEntries defines own data properties, so a "__proto__" key stays a key.
  return register(Object.freeze(Object.fromEntries(entries)) as JsonObject, height)
}

function register<T extends object>(container: T, height: number): T {
  made.set(container, height)
  return container
}

function copy(value: unknown, path: string, ancestors: Set<object>, depthLeft: number): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) reject(path, `${value} is not a JSON number`)
      return value === 0 ? 0 : value
    case 'object':
      if (value === null) return null
      return copyContainer(value, path, ancestors, depthLeft)
    default:
      return reject(path, value === undefined ? 'undefined is not JSON' : `a ${typeof value} is not JSON`)
  }
}

function copyContainer(value: object, path: string, ancestors: Set<object>, depthLeft: number): JsonValue {
  if (depthLeft <= 0) {
    throw new ReinError('JSON_TOO_DEEP', `${path}: nested deeper than the limit`, { details: { path } })
  }
  if (ancestors.has(value)) reject(path, 'a cycle is not JSON')
  ancestors.add(value)
  try {
    if (Array.isArray(value)) {
      const out: JsonValue[] = []
      for (let i = 0; i < value.length; i++) {
        const itemPath = `${path}[${i}]`
        if (!(i in value) || value[i] === undefined) reject(itemPath, 'undefined in an array is not JSON')
        out.push(copy(value[i], itemPath, ancestors, depthLeft - 1))
      }
      return Object.freeze(out) as JsonValue[]
    }
    const proto = Object.getPrototypeOf(value) as unknown
    if (proto !== Object.prototype && proto !== null) {
      const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'class instance'
      reject(path, `a ${kind} is not a plain object`)
    }
    if (Object.getOwnPropertySymbols(value).length > 0) reject(path, 'a symbol key is not JSON')
    const entries: [string, JsonValue][] = []
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key]
      if (item === undefined) continue
      entries.push([key, copy(item, childPath(path, key), ancestors, depthLeft - 1)])
    }
    // fromEntries defines own data properties, so a "__proto__" key stays a key.
    return Object.freeze(Object.fromEntries(entries)) as JsonObject
  } finally {
    ancestors.delete(value)
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** `$.a.b`, `$["odd key"]`, `$.list[2]`: the path notation every rein validator reports. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`
}

function reject(path: string, problem: string): never {
  throw new ReinError('NOT_JSON', `${path}: ${problem}`, { details: { path } })
}
