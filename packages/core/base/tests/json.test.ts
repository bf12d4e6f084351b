import { describe, expect, it } from 'vitest'
import { freezeJson, isFrozenJson, isReinError, toFrozenJson } from '../src/index.ts'

function rejection(value: unknown): { code: string; message: string } {
  try {
    toFrozenJson(value)
  } catch (error) {
    if (!isReinError(error)) throw error
    return { code: error.code, message: error.message }
  }
  throw new Error('expected toFrozenJson to throw')
}

describe('toFrozenJson', () => {
  it('copies plain JSON and freezes every level', () => {
    const source = { a: [1, { b: 'x' }], c: null, d: true }
    const copy = toFrozenJson(source)
    expect(copy).toEqual(source)
    expect(copy).not.toBe(source)
    expect(Object.isFrozen(copy)).toBe(true)
    expect(Object.isFrozen(copy.a)).toBe(true)
    expect(Object.isFrozen((copy.a as unknown[])[1])).toBe(true)
    expect(Object.isFrozen(source)).toBe(false)
  })

  it('equals a JSON round trip for values JSON carries', () => {
    const value = { text: 'naïve ☃ \u{1F600}', n: -1.5e-7, nested: { list: [[], {}, [null]] }, zero: -0 }
    expect(toFrozenJson(value)).toEqual(JSON.parse(JSON.stringify(value)))
    expect(Object.is(toFrozenJson(-0), 0)).toBe(true)
  })

  it('omits object properties whose value is undefined, as JSON.stringify does', () => {
    expect(toFrozenJson({ a: 1, b: undefined })).toEqual({ a: 1 })
  })

  it('keeps "__proto__" as an ordinary key', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as object
    const copy = toFrozenJson(parsed) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__', 'x'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it.each([
    ['a function', { a: { b: () => 1 } }, '$.a.b: a function is not JSON'],
    ['a symbol value', { s: Symbol('x') }, '$.s: a symbol is not JSON'],
    ['a symbol key', { [Symbol('k')]: 1 }, '$: a symbol key is not JSON'],
    ['undefined in an array', { list: [1, undefined] }, '$.list[1]: undefined in an array is not JSON'],
    // oxlint-disable-next-line no-sparse-arrays -- the hole is the case under test
    ['a hole in an array', { list: [1, , 3] }, '$.list[1]: undefined in an array is not JSON'],
    ['NaN', { n: Number.NaN }, '$.n: NaN is not a JSON number'],
    ['Infinity', [Number.POSITIVE_INFINITY], '$[0]: Infinity is not a JSON number'],
    ['-Infinity', { deep: { x: Number.NEGATIVE_INFINITY } }, '$.deep.x: -Infinity is not a JSON number'],
    ['a BigInt', { big: 10n }, '$.big: a bigint is not JSON'],
    ['a Date', { when: new Date(0) }, '$.when: a Date is not a plain object'],
    ['a Map', { m: new Map() }, '$.m: a Map is not a plain object'],
    ['a boxed string', { s: new String('x') }, '$.s: a String is not a plain object'],
    ['a class instance', { p: new (class Point { x = 1 })() }, '$.p: a Point is not a plain object'],
    ['undefined at the top', undefined, '$: undefined is not JSON'],
    ['an odd key', { 'odd key': { f: () => 0 } }, '$["odd key"].f: a function is not JSON'],
  ])('rejects %s with the path of the offender', (_label, value, message) => {
    expect(rejection(value)).toEqual({ code: 'NOT_JSON', message })
  })

  it.each([
    ['unfrozen', () => Object.create(toFrozenJson({ a: 1 })) as object],
    ['frozen', () => Object.freeze(Object.create(toFrozenJson({ a: 1 })) as object)],
  ])('rejects an object made with a frozen copy as its prototype (%s): the copy\'s mark is not its own', (_label, make) => {
    const heir = make()
    const message = '$.heir: an object made with another object as its prototype is not a plain object'
    expect(isFrozenJson(heir)).toBe(false)
    expect(rejection({ heir })).toEqual({ code: 'NOT_JSON', message })
    expect(() => freezeJson({ heir })).toThrow(message)
  })

  it('rejects a cycle but accepts a shared, acyclic reference', () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = { back: cyclic }
    expect(rejection(cyclic)).toEqual({ code: 'NOT_JSON', message: '$.self.back: a cycle is not JSON' })
    const shared = { v: 1 }
    expect(toFrozenJson({ x: shared, y: [shared] })).toEqual({ x: { v: 1 }, y: [{ v: 1 }] })
  })

  it('accepts objects without a prototype', () => {
    const bare = Object.assign(Object.create(null) as object, { k: 'v' })
    expect(toFrozenJson(bare)).toEqual({ k: 'v' })
  })

  it('refuses nesting beyond maxDepth instead of overflowing the stack', () => {
    let deep: unknown = 0
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(() => toFrozenJson(deep)).toThrow(expect.objectContaining({ code: 'JSON_TOO_DEEP' }))
    expect(toFrozenJson([[[1]]], { maxDepth: 3 })).toEqual([[[1]]])
    expect(() => toFrozenJson([[[1]]], { maxDepth: 2 })).toThrow(expect.objectContaining({ code: 'JSON_TOO_DEEP' }))
  })

  it('reuses a frozen copy it made instead of copying it again, within the depth limit', () => {
    const inner = toFrozenJson({ list: [[1]] })
    const outer = toFrozenJson({ inner, extra: 1 })
    expect(outer.inner).toBe(inner)
    expect(toFrozenJson(inner)).toBe(inner)
    // A reused copy still counts toward the depth of what holds it.
    expect(() => toFrozenJson({ inner }, { maxDepth: 3 })).toThrow(expect.objectContaining({ code: 'JSON_TOO_DEEP' }))
    expect(toFrozenJson({ inner }, { maxDepth: 4 }).inner).toBe(inner)
  })

  it('leaves no trace of the reuse in what JSON, keys or equality see, and freezes every level', () => {
    const copy = toFrozenJson({ a: [{ b: 1 }], c: 'x' })
    expect(JSON.stringify(copy)).toBe('{"a":[{"b":1}],"c":"x"}')
    expect(Object.keys(copy)).toEqual(['a', 'c'])
    expect(copy).toStrictEqual({ a: [{ b: 1 }], c: 'x' })
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.a) && Object.isFrozen(copy.a[0])).toBe(true)
    expect(structuredClone(copy)).toEqual({ a: [{ b: 1 }], c: 'x' })
  })

  it('names the path of what is not JSON inside a value holding reused copies', () => {
    const inner = toFrozenJson({ ok: [1, 2] })
    expect(() => toFrozenJson({ inner, bad: [1, Number.NaN] })).toThrow('$.bad[1]: NaN is not a JSON number')
  })
})

describe('freezeJson', () => {
  it('leaves what a polluted Object.prototype holds alone, and gives the value\'s own keys only', () => {
    const planted = Object.assign(Object.create(null) as object, { note: 'not the value\'s' })
    Object.defineProperty(Object.prototype, 'planted', { value: planted, enumerable: true, configurable: true, writable: true })
    try {
      const frozen = freezeJson(JSON.parse('{"a":{"b":1}}') as unknown)
      expect(Object.keys(frozen as object)).toEqual(['a'])
      expect(Object.isFrozen((frozen as { a: object }).a)).toBe(true)
      expect(Object.isFrozen(planted)).toBe(false)
    } finally {
      delete (Object.prototype as { planted?: unknown }).planted
    }
  })

  const deepFrozen = (value: unknown): boolean => typeof value !== 'object' || value === null || (Object.isFrozen(value) && Object.values(value).every(deepFrozen))

  it('freezes parsed JSON where it is, marked as a frozen copy, and returns that same value', () => {
    const parsed = JSON.parse('{"a":[1,{"b":"x"}],"__proto__":{"c":null},"d":true}') as Record<string, unknown>
    const frozen = freezeJson(parsed)
    expect(frozen).toBe(parsed)
    expect(deepFrozen(parsed)).toBe(true)
    expect(isFrozenJson(parsed)).toBe(true)
    expect(Object.keys(parsed)).toEqual(['a', '__proto__', 'd'])
    // Reused as it is by a later toFrozenJson, and again by freezeJson.
    expect(toFrozenJson(parsed)).toBe(parsed)
    expect(freezeJson(parsed)).toBe(parsed)
    // A frozen copy inside is taken as it is.
    const inner = toFrozenJson({ deep: [1, 2] })
    const outer = { inner, list: [inner] }
    expect(freezeJson(outer).inner).toBe(inner)
  })

  it('copies, as toFrozenJson does, what cannot be frozen as it stands', () => {
    for (const [value, copied] of [[{ a: -0 }, { a: 0 }], [{ a: undefined, b: 1 }, { b: 1 }], [Object.freeze({ a: 1 }), { a: 1 }]] as const) {
      const frozen = freezeJson(value)
      expect(frozen).not.toBe(value)
      expect(frozen).toStrictEqual(copied)
      expect(isFrozenJson(frozen)).toBe(true)
    }
    const holey: unknown[] = [1]
    holey[2] = 3
    expect(() => freezeJson({ a: holey })).toThrow('$.a[1]: undefined in an array is not JSON')
    expect(() => freezeJson({ a: { b: { c: {} } } }, { maxDepth: 3 })).toThrow('nested deeper than the limit')
  })

  it('refuses what JSON cannot carry with toFrozenJson\'s errors: a class instance, a function, a cycle', () => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle.self = cycle
    for (const value of [{ when: new Date(0) }, { run: () => 1 }, cycle, { n: Number.NaN }]) {
      let code: string | undefined
      try {
        freezeJson(value)
      } catch (error) {
        code = isReinError(error) ? error.code : 'other'
      }
      expect(code).toBe('NOT_JSON')
    }
  })
})
