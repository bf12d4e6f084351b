import { describe, expect, it } from 'vitest'
import { ReinError, errorChain, isReinError, kindOf, messageOf } from '../src/index.ts'

describe('ReinError', () => {
  it('carries code, message, cause and details', () => {
    const cause = new Error('disk full')
    const error = new ReinError('WRITE_FAILED', 'could not save', { cause, details: { path: '/tmp/x' } })
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('ReinError')
    expect(error.code).toBe('WRITE_FAILED')
    expect(error.message).toBe('could not save')
    expect(error.cause).toBe(cause)
    expect(error.details).toEqual({ path: '/tmp/x' })
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'ReinError', code: 'WRITE_FAILED', message: 'could not save', details: { path: '/tmp/x' },
    })
  })

  it('recognizes errors from another copy of the module by the global brand', () => {
    // What a second copy of this module produces: a class of its own with the same global symbol.
    class OtherCopy extends Error {
      code = 'X'
      constructor() {
        super('from elsewhere')
        Object.defineProperty(this, Symbol.for('rein.error'), { value: true })
      }
    }
    const foreign = new OtherCopy()
    expect(foreign instanceof ReinError).toBe(false)
    expect(isReinError(foreign)).toBe(true)
    expect(isReinError(foreign, 'X')).toBe(true)
    expect(isReinError(foreign, 'Y')).toBe(false)
  })

  it('rejects lookalikes that only share the shape', () => {
    expect(isReinError({ code: 'X', message: 'm' })).toBe(false)
    expect(isReinError(new Error('plain'))).toBe(false)
    expect(isReinError(null)).toBe(false)
    expect(isReinError('X')).toBe(false)
  })
})

describe('errorChain', () => {
  it('renders each link of the cause chain, outermost first', () => {
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
    const middle = new TypeError('fetch failed', { cause: root })
    const outer = new ReinError('TRANSPORT', 'request to the provider failed', { cause: middle })
    expect(errorChain(outer)).toBe([
      'TRANSPORT: request to the provider failed',
      '  caused by: TypeError: fetch failed',
      '  caused by: Error [ECONNREFUSED]: connect ECONNREFUSED 127.0.0.1:1',
    ].join('\n'))
  })

  it('stops at a cycle instead of looping', () => {
    const a = new Error('a')
    const b = new Error('b', { cause: a })
    ;(a as { cause?: unknown }).cause = b
    expect(errorChain(b)).toBe('Error: b\n  caused by: Error: a\n  caused by: (cycle)')
  })

  it('describes non-error causes', () => {
    expect(errorChain(new Error('outer', { cause: 'a string reason' }))).toBe('Error: outer\n  caused by: a string reason')
    expect(errorChain({ status: 500 })).toBe('{"status":500}')
  })
})

describe('messageOf and kindOf', () => {
  it('says what any thrown value says, never throwing: an object without a prototype has no string form', () => {
    expect(messageOf(new TypeError('bad'))).toBe('bad')
    expect(messageOf({ message: 'a plain object reason' })).toBe('a plain object reason')
    expect(messageOf('text')).toBe('text')
    expect(messageOf(Object.create(null))).toBe('a value that cannot be printed')
    expect(errorChain(Object.assign(Object.create(null), { n: 1n }))).toBe('a value that cannot be printed')
  })

  it('names a value\'s kind for a message', () => {
    expect([null, undefined, [], {}, 1, 'x', () => {}].map(kindOf)).toEqual(['null', 'undefined', 'an array', 'an object', 'a number', 'a string', 'a function'])
  })
})

describe('isReinError, errorChain and messageOf on a value whose every read throws', () => {
  const hostile = () => new Proxy({}, { get: () => { throw new Error('trap') }, getPrototypeOf: () => { throw new Error('trap') }, has: () => { throw new Error('trap') } })
  const revoked = () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy }

  it('answers no, rather than throwing, for a Proxy whose traps throw or a revoked Proxy', () => {
    for (const value of [hostile(), revoked()]) {
      expect(isReinError(value)).toBe(false)
      expect(isReinError(value, 'X')).toBe(false)
    }
  })

  it('still describes such a value, never throwing', () => {
    for (const value of [hostile(), revoked()]) {
      expect(typeof errorChain(value)).toBe('string')
      expect(typeof messageOf(value)).toBe('string')
    }
  })
})
