import { describe, expect, it } from 'vitest'
import { callListeners, eventSender, type ListenerSource } from '../src/index.ts'

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

  it("reports each listener's failure when the fallback rejects with them together, as cordis's parallel does", async () => {
    const reported: string[] = []
    callListeners({}, 'e', [], (error) => reported.push((error as Error).message), () => Promise.reject(new AggregateError([new Error('one'), new Error('two')])))
    await new Promise((resolve) => setImmediate(resolve))
    expect(reported).toEqual(['one', 'two'])
  })
})

describe('eventSender', () => {
  it('sends to the listeners of a name, reports a failing one by name, and says whether a name has any', async () => {
    const calls: unknown[][] = []
    const reported: string[] = []
    const hooks = { 'a/b': [{ callback: (...args: unknown[]) => { calls.push(args) } }, { callback: () => { throw new Error('broken') } }] }
    const sender = eventSender<{ 'a/b': (n: number, s: string) => void; 'c/d': (n: number) => void }>({ ...source(hooks as never), parallel: () => Promise.resolve() }, (name, error) => reported.push(`${name}: ${(error as Error).message}`))
    expect([sender.has('a/b'), sender.has('c/d')]).toEqual([true, false])
    sender.send('a/b', [1, 'x'])
    sender.send('c/d', [2])
    expect(calls).toEqual([[1, 'x']])
    expect(reported).toEqual(['a/b: broken'])
  })

  it("hands a dispatch to the context's parallel, with the arguments, when something observes every dispatch", async () => {
    const dispatched: unknown[][] = []
    const reported: string[] = []
    const ctx = {
      ...source({ 'internal/dispatch': [{ callback: () => {} }] }),
      parallel: (...args: unknown[]) => { dispatched.push(args); return Promise.reject(new Error('refused')) },
    }
    eventSender<{ 'a/b': (a: number, b: number) => void }>(ctx as never, (name, error) => reported.push(`${name}: ${(error as Error).message}`)).send('a/b', [1, 2])
    await new Promise((resolve) => setImmediate(resolve))
    expect(dispatched).toEqual([['a/b', 1, 2]])
    expect(reported).toEqual(['a/b: refused'])
  })
})
