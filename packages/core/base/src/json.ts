/** JSON values and `toFrozenJson`, the lossless deep copy that every durable value passes through. */

import { ReinError } from './rein-error.ts'

/** A JSON scalar. */
export type JsonPrimitive = string | number | boolean | null
/** Any JSON value: what logs, tool values and wire bodies hold. */
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue }
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

/** A JSON value frozen all the way down. */
export type FrozenJson<T = JsonValue> = T extends JsonPrimitive
  ? T
  : T extends readonly (infer U)[]
    ? readonly FrozenJson<U>[]
    : { readonly [K in keyof T]: FrozenJson<T[K]> }

/** How deep `toFrozenJson` goes before it refuses a value. */
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
  let out: JsonValue
  try {
    out = quickCopy(value, [], maxDepth)
  } catch (error) {
    // The quick copy knows only that something is wrong; this one says where, and throws.
    if (error === UNFIT) return copy(value, '$', new Set(), maxDepth) as FrozenJson<T>
    throw error
  }
  if (typeof out === 'object' && out !== null && !Object.isFrozen(out)) {
    Object.defineProperty(out, FROZEN, { value: height })
    Object.freeze(out)
  }
  return out as FrozenJson<T>
}

/*
 * Every durable value passes through here, often more than once on its way to the log (a message,
 * the event data holding it, the event). A value this function returned is a frozen copy already:
 * it carries a mark (a symbol-keyed property, not enumerable, so JSON and equality never see it)
 * with how deep it nests, and is reused as it is — which also keeps its identity, that callers
 * cache by — as long as the depth limit allows. Only what a call returns is marked: marking every
 * container would cost more than the copies it saves.
 */
const FROZEN = Symbol('frozen JSON')
/** What the quick copy throws at anything it cannot copy; the slow one then reports it. */
const UNFIT = Symbol('unfit')
/** The height (nesting of containers) of what `quickCopy` last returned: 0 for a primitive. */
let height = 0

/**
 * `toFrozenJson` without the copy, for a value that is plain JSON already (parsed from text, or put
 * together from such values): freezes it where it is and marks it as `toFrozenJson` marks its
 * copies, so it is reused wherever a frozen copy is asked for. The value itself is frozen, so only
 * for one nobody changes afterwards. What cannot be frozen as it stands (`-0`, an `undefined`
 * property, an array hole, a class instance, a frozen but unmarked top, nesting past `maxDepth`) is
 * copied by `toFrozenJson`, which throws for what JSON cannot carry. Symbol keys are not looked for:
 * JSON text cannot make them.
 */
export function freezeJson<T = JsonValue>(value: T, options: ToFrozenJsonOptions = {}): FrozenJson<T> {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || prototypePolluted()) return toFrozenJson(value, options)
  try {
    const tallest = freezeChildren(value, options.maxDepth ?? DEFAULT_MAX_DEPTH)
    Object.defineProperty(value, FROZEN, { value: tallest + 1 })
    Object.freeze(value)
    return value as FrozenJson<T>
  } catch (error) {
    if (error === UNFIT) return toFrozenJson(value, options)
    throw error
  }
}

/** Whether Object.prototype has enumerable keys, which `for…in` in freezeChildren would walk. */
function prototypePolluted(): boolean {
  for (const _key in Object.prototype) return true
  return false
}

/** Freezes what `value` holds, deepest first; the height of its tallest child (0 for none or primitives). */
function freezeChildren(value: object, depthLeft: number): number {
  const proto = Object.getPrototypeOf(value) as unknown
  const isArray = Array.isArray(value)
  if (depthLeft <= 0 || (!isArray && proto !== Object.prototype && proto !== null)) throw UNFIT
  let tallest = 0
  if (isArray) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw UNFIT
      const height = freezeItem(value[i], depthLeft - 1)
      if (height > tallest) tallest = height
    }
    return tallest
  }
  // for…in, not Object.values: no array per object, which was most of the time a resume spent
  // freezing. It sees own keys only: freezeJson copies instead when Object.prototype has enumerable ones.
  for (const key in value) {
    const height = freezeItem((value as Record<string, unknown>)[key], depthLeft - 1)
    if (height > tallest) tallest = height
  }
  return tallest
}

function freezeItem(item: unknown, depthLeft: number): number {
  switch (typeof item) {
    case 'string':
    case 'boolean':
      return 0
    case 'number':
      if (!Number.isFinite(item) || Object.is(item, -0)) throw UNFIT
      return 0
    case 'object': {
      if (item === null) return 0
      const mark = markOf(item)
      if (mark !== undefined) {
        if (mark > depthLeft) throw UNFIT
        return mark
      }
      const height = freezeChildren(item, depthLeft) + 1
      Object.freeze(item)
      return height
    }
    default:
      throw UNFIT
  }
}

/** True for a value `toFrozenJson` returned: frozen all the way down, and so safe to cache by identity. */
export function isFrozenJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && markOf(value) !== undefined
}

/** The height a frozen copy was marked with, if `value` is one. */
function markOf(value: object): number | undefined {
  const mark = (value as { [FROZEN]?: unknown })[FROZEN]
  if (typeof mark !== 'number') return undefined
  // Only plain values are marked, so a mark read through any other prototype is inherited from a
  // frozen copy (`Object.create(copy)`) and says nothing about this value.
  const proto = Object.getPrototypeOf(value) as unknown
  return proto === Object.prototype || proto === Array.prototype || proto === null ? mark : undefined
}

/**
 * `copy` without paths (they cost a string per node): throws `UNFIT` instead of a report. The
 * containers above `value` are a stack, not a set: values nest a few levels, where a scan beats a
 * hash, and the depth limit bounds the scan.
 */
function quickCopy(value: unknown, ancestors: object[], depthLeft: number): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      height = 0
      return value
    case 'number':
      if (!Number.isFinite(value)) throw UNFIT
      height = 0
      return value === 0 ? 0 : value
    case 'object': {
      if (value === null) {
        height = 0
        return null
      }
      const mark = markOf(value)
      if (mark !== undefined) {
        if (mark > depthLeft) throw UNFIT
        height = mark
        return value as JsonValue
      }
      if (depthLeft <= 0 || ancestors.includes(value)) throw UNFIT
      ancestors.push(value)
      const out = Array.isArray(value) ? quickArray(value, ancestors, depthLeft) : quickObject(value, ancestors, depthLeft)
      ancestors.pop()
      return out
    }
    default:
      throw UNFIT
  }
}

/** Leaves the copy unfrozen when it is what the call returns: toFrozenJson marks, then freezes it. */
function quickArray(value: readonly unknown[], ancestors: object[], depthLeft: number): JsonValue {
  const out: JsonValue[] = []
  let tallest = 0
  for (let i = 0; i < value.length; i++) {
    if (!(i in value)) throw UNFIT
    out.push(quickCopy(value[i], ancestors, depthLeft - 1))
    if (height > tallest) tallest = height
  }
  height = tallest + 1
  return ancestors.length > 1 ? Object.freeze(out) as JsonValue[] : out
}

function quickObject(value: object, ancestors: object[], depthLeft: number): JsonValue {
  const proto = Object.getPrototypeOf(value) as unknown
  if ((proto !== Object.prototype && proto !== null) || Object.getOwnPropertySymbols(value).length > 0) throw UNFIT
  const out: Record<string, JsonValue> = {}
  let tallest = 0
  for (const key of Object.keys(value)) {
    const raw = (value as Record<string, unknown>)[key]
    if (raw === undefined) continue
    const item = quickCopy(raw, ancestors, depthLeft - 1)
    // A "__proto__" key stays a key: assigning it would set the prototype instead.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true })
    else out[key] = item
    if (height > tallest) tallest = height
  }
  height = tallest + 1
  return ancestors.length > 1 ? Object.freeze(out) : out
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
  const mark = markOf(value)
  if (depthLeft <= 0 || (mark !== undefined && mark > depthLeft)) {
    throw new ReinError('JSON_TOO_DEEP', `${path}: nested deeper than the limit`, { details: { path } })
  }
  if (mark !== undefined) return value as JsonValue
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
      reject(path, `${describeInstance(value)} is not a plain object`)
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

/** What an object that is not plain is, for an error: `a Date`, or one whose prototype is a plain object. */
function describeInstance(value: object): string {
  const name = (value as { constructor?: { name?: string } }).constructor?.name
  if (name === 'Object') return 'an object made with another object as its prototype'
  return `a ${name ?? 'class instance'}`
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
