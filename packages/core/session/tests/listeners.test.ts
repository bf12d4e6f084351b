import { Context } from '@deepseek-ai/cordis'
import { hasListeners } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { boot } from './boot.ts'


describe('session listeners (issue #9)', () => {
  it('tells whether anyone listens to an event, as listeners come and go', async () => {
    const root = await boot()
    expect(hasListeners(root, 'session/append')).toBe(false)
    const fiber = await root.plugin({ name: 'watcher', apply: (ctx: Context) => { ctx.on('session/append', () => {}) } })
    expect(hasListeners(root, 'session/append')).toBe(true)
    expect(hasListeners(root, 'session/flush')).toBe(false)
    await fiber.dispose()
    expect(hasListeners(root, 'session/append')).toBe(false)
    // A listener to every dispatch listens to this one too.
    const spy = root.on('internal/dispatch', () => {})
    expect(hasListeners(root, 'session/append')).toBe(true)
    spy()
    expect(hasListeners(root, 'session/append')).toBe(false)
  })

  it('dispatches nothing per append while nobody listens', async () => {
    const root = await boot()
    const dispatched: string[] = []
    const dispatch = root.events.dispatch.bind(root.events)
    root.events.dispatch = (type, args) => {
      dispatched.push(String(args[0]))
      return dispatch(type, args)
    }
    const session = await root.sessions.create({ cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await session.flush()
    expect(dispatched.filter((name) => name.startsWith('session/'))).toEqual([])
  })

  it('still tells listeners of every append and flush, and a throwing listener breaks neither', async () => {
    const root = await boot()
    const seen: string[] = []
    root.on('session/append', () => { throw new Error('listener bug') })
    // oxlint-disable-next-line typescript/no-misused-promises -- a listener whose promise rejects is the case under test
    root.on('session/append', async () => { throw new Error('async listener bug') })
    root.on('session/append', (_session, event) => { seen.push(`append ${event.type}`) })
    root.on('session/flush', () => { throw new Error('flush listener bug') })
    root.on('session/flush', (_session, events) => { seen.push(`flush ${events.length}`) })
    const session = await root.sessions.create({ id: 's', cwd: '/w' })
    expect(() => session.append('turn/start', { turn: 1 })).not.toThrow()
    expect(seen).toEqual(['append turn/start'])
    await session.flush()
    session.append('turn/end', { turn: 1, reason: 'completed' })
    await session.close()
    await expect.poll(() => seen).toEqual(['append turn/start', 'flush 1', 'append turn/end', 'flush 1'])
    expect((await root.sessions.load('s')).events).toHaveLength(2)
  })
})
