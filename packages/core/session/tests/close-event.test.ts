import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import SessionService, { sessionMemory } from '../src/index.ts'
import { boot } from './boot.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('session/close', () => {
  it('runs after the beforeClose hooks, while the session is still open, and what a listener appends is saved', async () => {
    const root = await boot()
    const seen: string[] = []
    root.on('session/close', async (session) => {
      seen.push(`close ${String(session.closed)}`)
      expect(await root.sessions.folder(session.id)).toBe(await session.folder())
      session.append('turn/start', { turn: 2 })
    })
    const session = await root.sessions.create({ id: 's', cwd: '/w' })
    session.beforeClose(() => { seen.push('beforeClose') })
    session.append('turn/start', { turn: 1 })
    await session.close()
    expect(seen).toEqual(['beforeClose', 'close false'])
    expect(session.closed).toBe(true)
    expect((await root.sessions.load('s')).events.map((event) => event.data)).toEqual([{ turn: 1 }, { turn: 2 }])
    await session.close()
    expect(seen).toHaveLength(2)
  })

  it('logs a listener that fails, and the session still closes and saves', async () => {
    const root = await boot()
    root.on('session/close', async () => { throw new Error('listener bug') })
    const session = await root.sessions.create({ id: 's', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await session.close()
    expect(session.closed).toBe(true)
    expect((await root.sessions.load('s')).events).toHaveLength(1)
    expect(root.logger.buffer.some((entry) => entry.type === 'error' && entry.name === 'sessions')).toBe(true)
  })

  it('stops waiting for a listener that never settles, so close never hangs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const root = await boot()
    const warnings: string[] = []
    root.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warnings.push(String(message.args[0])) } })
    let called = false
    root.on('session/close', () => {
      called = true
      return new Promise<void>(() => {})
    })
    const session = await root.sessions.create({ id: 's', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    let closed = false
    const closing = session.close().then(() => { closed = true })
    await vi.advanceTimersByTimeAsync(60_000)
    await closing
    expect([called, closed, session.closed]).toEqual([true, true, true])
    expect((await root.sessions.load('s')).events).toHaveLength(1)
    expect(warnings).toEqual([expect.stringContaining('did not finish')])
  })

  it('is heard for every session still open when its store goes away', async () => {
    const root = new Context()
    await root.plugin(SessionService)
    const store = await root.plugin(sessionMemory)
    const closed: string[] = []
    root.on('session/close', (session) => { closed.push(session.id) })
    await root.sessions.create({ id: 'a', cwd: '/w' })
    await root.sessions.create({ id: 'b', cwd: '/w' })
    await store.dispose()
    expect(closed.sort()).toEqual(['a', 'b'])
  })
})
