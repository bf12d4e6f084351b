import { describe, expect, it } from 'vitest'
import { MemorySessionStore, SESSION_FORMAT_VERSION, type SessionEvent } from '../src/index.ts'

const header = (id: string) => ({ formatVersion: SESSION_FORMAT_VERSION, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: '/work', depth: 0 })
const event = (seq: number): SessionEvent => ({ seq, type: 'step/start', time: '2026-01-01T00:00:00.000Z', data: { turn: 1, step: seq } })

describe('MemorySessionStore', () => {
  it('refuses a batch whose seqs skip after its first, as a durable store does, and keeps nothing of it', async () => {
    const store = new MemorySessionStore()
    await store.create(header('s1'))
    await expect(store.append('s1', [event(0), event(5)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH', details: { expected: 1, got: 5 } })
    expect((await store.load('s1')).events).toEqual([])
    await expect(store.append('s1', [event(3)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH', details: { expected: 0, got: 3 } })
    await store.append('s1', [event(0), event(1)])
    expect((await store.load('s1')).events).toEqual([event(0), event(1)])
  })
})
