import { Context } from '@deepseek-ai/cordis'
import { isFrozenJson, toFrozenJson, type JsonValue } from '@rein/base'
import { userMessage } from '@rein/llm'
import { describe, expect, it } from 'vitest'
import SessionService, { MemorySessionStore, sessionMemory, type SessionEvent, type SessionStore } from '../src/index.ts'
import { boot } from './boot.ts'


const canFreeze = (value: JsonValue) => {
  try {
    toFrozenJson(value)
    return true
  } catch {
    return false
  }
}

describe('ctx.sessions', () => {
  it('appends contiguous, frozen, JSON-only events and makes them durable on flush', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    const appended: string[] = []
    const flushed: number[][] = []
    root.on('session/append', (_s, event) => { appended.push(event.type) })
    root.on('session/flush', (_s, events) => { flushed.push(events.map((event) => event.seq)) })
    session.append('turn/start', { turn: 1 })
    session.append('user/message', { message: userMessage('hello', 'u1') })
    expect(session.pending).toBe(2)
    await session.flush()
    expect(session.pending).toBe(0)
    expect(appended).toEqual(['turn/start', 'user/message'])
    await expect.poll(() => flushed).toEqual([[0, 1]])
    expect(session.events.map((event) => event.seq)).toEqual([0, 1])
    expect(Object.isFrozen(session.events[1]!.data)).toBe(true)
    expect(() => session.append('turn/start', { turn: Number.NaN })).toThrow(expect.objectContaining({ code: 'INVALID_EVENT' }))
    expect(() => session.append('my/thing', {})).toThrow(expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE' }))
    expect(session.messages()).toEqual([userMessage('hello', 'u1')])
  })

  it('refuses a core event of the wrong shape at append (INVALID_EVENT), so the log it would have made unloadable stays loadable', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    session.append('user/message', { message: userMessage('hello', 'u1') })
    const wrong = { message: { ...userMessage('x', 'u2'), content: 'not a list' } } as unknown as { message: ReturnType<typeof userMessage> }
    expect(() => session.append('user/message', wrong)).toThrow(expect.objectContaining({ code: 'INVALID_EVENT', message: expect.stringContaining('data.message.content: a list') }))
    expect(session.events).toHaveLength(1)
    await session.flush()
    await session.close()
    await expect(root.sessions.open(session.id)).resolves.toBeDefined()
  })

  it('hands a store its events as frozen JSON, so one that keeps a frozen copy keeps the event itself', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    session.append('user/message', { message: userMessage('hello', 'u1') })
    expect(isFrozenJson(session.events[0])).toBe(true)
    await session.flush()
    await session.close()
    // The in-memory store keeps `toFrozenJson(event)`: the same object when the event is marked.
    const loaded = await root.sessions.open(session.id)
    expect(loaded.events[0]).toBe(session.events[0])
  })

  it('refuses at append, not at every flush after, data nested so deep the event around it cannot be stored', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    let deepest: JsonValue = 'x'
    // The deepest data JSON takes: one level more and the event holding it is past the limit.
    while (canFreeze([deepest])) deepest = [deepest]
    root.sessions.defineEvent('my/deep')
    expect(() => session.append('my/deep', deepest)).toThrow(expect.objectContaining({ code: 'INVALID_EVENT' }))
    expect(session.pending).toBe(0)
    session.append('turn/start', { turn: 1 })
    await session.flush()
    expect(session.pending).toBe(0)
  })

  it('counts the turns a log started, as appended and as loaded', async () => {
    const root = await boot()
    const session = await root.sessions.create({ id: 'counted', cwd: '/w' })
    expect(session.turns).toBe(0)
    for (let turn = 1; turn <= 3; turn++) {
      session.append('turn/start', { turn })
      session.append('turn/end', { turn, reason: 'completed' })
    }
    expect(session.turns).toBe(3)
    await session.close()
    expect((await root.sessions.open('counted')).turns).toBe(3)
  })

  it('reopens a stored session and refuses a second writer', async () => {
    const root = await boot()
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await session.close()
    const reopened = await root.sessions.open('s1')
    expect(reopened.events.map((event) => event.type)).toEqual(['turn/start'])
    await expect(root.sessions.open('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    reopened.append('turn/end', { turn: 1, reason: 'completed' })
    await reopened.close()
    expect((await root.sessions.list()).map((summary) => [summary.id, summary.turns])).toEqual([['s1', 1]])
  })

  it('refuses a log with an event type no plugin defines, unless it is ignorable', async () => {
    const root = await boot()
    let dispose!: () => Promise<void>
    await root.inject(['sessions'], (ctx) => { dispose = ctx.sessions.defineEvent('notes/added') })
    const session = await root.sessions.create({ id: 's2', cwd: '/w' })
    session.append('notes/added', { text: 'x' })
    session.append('notes/added', { text: 'y' }, { ignorable: true })
    await session.close()
    expect((await root.sessions.load('s2')).events).toHaveLength(2)
    await dispose()
    await expect(root.sessions.load('s2')).rejects.toMatchObject({
      code: 'SESSION_UNKNOWN_EVENT',
      message: 'session s2 has event #0 of type "notes/added", which no loaded plugin defines; load the plugin that wrote it',
    })
  })

  it('refuses a session written by a newer format', async () => {
    const root = new Context()
    await root.plugin(SessionService)
    const store = new MemorySessionStore()
    await store.create({ formatVersion: 99, id: 'future', createdAt: 'x', cwd: '/', depth: 0 })
    await store.close('future')
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
    await expect(root.sessions.open('future')).rejects.toMatchObject({ code: 'SESSION_FORMAT_UNSUPPORTED' })
    // The refused open left no claim behind.
    await expect(store.open('future')).resolves.toBeDefined()
  })

  it('keeps events pending when a flush fails, and writes them on the next try', async () => {
    const root = new Context()
    await root.plugin(SessionService)
    const inner = new MemorySessionStore()
    let failures = 1
    const flaky: SessionStore = {
      ...Object.fromEntries((['create', 'open', 'flush', 'close', 'load', 'list'] as const).map((key) => [key, inner[key].bind(inner)])) as unknown as SessionStore,
      append: async (id: string, events: readonly SessionEvent[]) => {
        if (failures-- > 0) throw new Error('disk full')
        return inner.append(id, events)
      },
    }
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(flaky) })
    const session = await root.sessions.create({ id: 's3', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await expect(session.flush()).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED', message: 'could not save session s3: disk full' })
    expect(session.pending).toBe(1)
    await session.flush()
    expect((await inner.load('s3')).events).toHaveLength(1)
  })

  it('says which plugin to add when no store is loaded, and allows only one store', async () => {
    const root = new Context()
    await root.plugin(SessionService)
    await expect(root.sessions.create({ cwd: '/' })).rejects.toMatchObject({ code: 'NO_SESSION_STORE' })
    const fiber = await root.plugin(sessionMemory)
    expect(() => root.sessions.registerStore(new MemorySessionStore())).toThrow(expect.objectContaining({ code: 'DUPLICATE_STORE' }))
    await fiber.dispose()
    await expect(root.sessions.list()).rejects.toMatchObject({ code: 'NO_SESSION_STORE' })
  })
})
