import { describe, expect, it } from 'vitest'
import { callListeners, type ListenerSource } from '../src/index.ts'

/** A listener table shaped like cordis 4's (`events._hooks`). */
function source(hooks: Record<string, { callback: (...args: never[]) => unknown }[]>): ListenerSource {
  return { events: { _hooks: hooks } }
}

describe('callListeners', () => {
  it('calls every listener in order with the arguments; a throw or a rejection is reported and the rest still run', async () => {
    const calls: string[] = []
    const reported: unknown[] = []
    const hooks = {
      'x/y': [
        { callback: (a: number, b: string) => { calls.push(`first ${a} ${b}`); throw new Error('thrown') } },
        { callback: () => { calls.push('second'); return Promise.reject(new Error('rejected')) } },
        { callback: () => { calls.push('third') } },
      ],
    }
    callListeners(source(hooks as never), 'x/y', [1, 'b'], (error) => reported.push((error as Error).message), () => Promise.resolve())
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toEqual(['first 1 b', 'second', 'third'])
    expect(reported).toEqual(['thrown', 'rejected'])
  })

  it('lets a listener remove itself while the list is called', () => {
    const calls: string[] = []
    const list: { callback: () => void }[] = []
    list.push({ callback: () => { calls.push('a'); list.splice(0, 1) } }, { callback: () => { calls.push('b') } })
    callListeners(source({ e: list }), 'e', [], () => {}, () => Promise.resolve())
    expect(calls).toEqual(['a', 'b'])
  })

  it('uses the fallback when something observes every dispatch, or the table is not there', async () => {
    let fallbacks = 0
    const fallback = () => { fallbacks++; return Promise.resolve() }
    callListeners(source({ 'internal/dispatch': [{ callback: () => {} }], e: [{ callback: () => {} }] }), 'e', [], () => {}, fallback)
    callListeners({}, 'e', [], () => {}, fallback)
    expect(fallbacks).toBe(2)
    const reported: unknown[] = []
    callListeners({}, 'e', [], (error) => reported.push(error), () => Promise.reject(new Error('no')))
    await new Promise((resolve) => setImmediate(resolve))
    expect(reported).toHaveLength(1)
  })
})
