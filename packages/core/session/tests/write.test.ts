import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import SessionService, { MemorySessionStore, type SessionEvent, type SessionStore } from '../src/index.ts'

/**
 * A store over the memory one that records its calls, with a `write` if asked; `failing` makes the
 * next call of that name throw, `during` runs something inside it.
 */
function recordingStore(options: { withWrite: boolean }) {
  const inner = new MemorySessionStore()
  const calls: string[] = []
  const failing = new Set<string>()
  const during = new Map<string, () => void>()
  const step = (name: string) => {
    calls.push(name)
    during.get(name)?.()
    if (failing.delete(name)) throw new Error(`${name} broke`)
  }
  const store: SessionStore = {
    create: (header) => inner.create(header),
    open: (id) => inner.open(id),
    close: (id) => inner.close(id),
    load: (id) => inner.load(id),
    list: () => inner.list(),
    append: async (id: string, events: readonly SessionEvent[]) => {
      step(`append ${events.map((event) => event.seq).join(',')}`)
      return inner.append(id, events)
    },
    flush: async (id: string) => {
      step('flush')
      return inner.flush(id)
    },
    ...(options.withWrite ? { write: async (id: string) => { step('write'); return inner.flush(id) } } : {}),
  }
  return { store, inner, calls, failing, during }
}

async function open(options: { withWrite: boolean }) {
  const root = new Context()
  await root.plugin(SessionService)
  const recording = recordingStore(options)
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(recording.store) })
  const flushed: number[][] = []
  root.on('session/flush', (_session, events) => { flushed.push(events.map((event) => event.seq)) })
  const session = await root.sessions.create({ id: 's', cwd: '/w' })
  return { session, flushed, ...recording }
}

describe('Session.write', () => {
  it('hands the events to the store without its durability barrier, and tells no flush listener', async () => {
    const { session, calls, flushed, inner } = await open({ withWrite: true })
    session.append('turn/start', { turn: 1 })
    session.append('step/start', { turn: 1, step: 1 })
    await session.write()
    expect(calls).toEqual(['append 0,1', 'write'])
    expect((await inner.load('s')).events.map((event) => event.seq)).toEqual([0, 1])
    expect(flushed).toEqual([])
    expect(session.pending).toBe(2)
  })

  it('is followed by a flush that appends only what is new and makes the written events durable too', async () => {
    const { session, calls, flushed } = await open({ withWrite: true })
    session.append('turn/start', { turn: 1 })
    await session.write()
    session.append('step/start', { turn: 1, step: 1 })
    await session.flush()
    expect(calls).toEqual(['append 0', 'write', 'append 1', 'flush'])
    expect(flushed).toEqual([[0, 1]])
    expect(session.pending).toBe(0)
  })

  it('still flushes when everything was written and nothing is new, so the close makes a write durable', async () => {
    const { session, calls, flushed } = await open({ withWrite: true })
    session.append('turn/start', { turn: 1 })
    await session.write()
    await session.write()
    await session.close()
    expect(calls).toEqual(['append 0', 'write', 'flush'])
    expect(flushed).toEqual([[0]])
  })

  it('flushes on a store that has no write', async () => {
    const { session, calls, flushed } = await open({ withWrite: false })
    session.append('turn/start', { turn: 1 })
    await session.write()
    expect(calls).toEqual(['append 0', 'flush'])
    expect(flushed).toEqual([[0]])
  })

  it('keeps events pending when a write fails, and appends them again from the same seq', async () => {
    const { session, calls, failing, flushed } = await open({ withWrite: true })
    session.append('turn/start', { turn: 1 })
    failing.add('append 0')
    await expect(session.write()).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED', message: 'could not save session s: append 0 broke' })
    await session.write()
    await session.flush()
    expect(calls).toEqual(['append 0', 'append 0', 'write', 'flush'])
    expect(flushed).toEqual([[0]])
  })

  it('counts only the events it handed over, when more are appended while the store writes', async () => {
    const { session, calls, flushed, during } = await open({ withWrite: true })
    session.append('turn/start', { turn: 1 })
    during.set('write', () => { session.append('step/start', { turn: 1, step: 1 }) })
    await session.write()
    expect(session.events).toHaveLength(2)
    await session.flush()
    expect(calls).toEqual(['append 0', 'write', 'append 1', 'flush'])
    expect(flushed).toEqual([[0, 1]])
  })
})
