import { appendFile, chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import SessionService from '@rein/session'
import { describe, expect, it } from 'vitest'
import * as plugin from '../src/index.ts'
import { JsonlSessionStore } from '../src/index.ts'
import { header, range } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const mode = async (path: string) => (await stat(path)).mode & 0o777
const gone = (path: string) => expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' })

describe('session files are private (issue #8)', () => {
  it('creates session files and locks 0600 in a 0700 folder', async () => {
    const root = join(await tempRoot(), 'nested', 'sessions')
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    expect(await mode(join(root, 's1.lock'))).toBe(0o600)
    await store.append('s1', range(0, 2))
    await store.flush('s1')
    expect(await mode(join(root, 's1.jsonl'))).toBe(0o600)
    expect(await mode(root)).toBe(0o700)
    expect(await mode(join(root, '..'))).toBe(0o700)
    await store.close('s1')
  })
})

describe('a session file an older rein left readable to others', () => {
  it('is narrowed to 0600 when the session is opened for writing', async () => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await first.append('s1', range(0, 1))
    await first.close('s1')
    await chmod(join(root, 's1.jsonl'), 0o644)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    expect(await mode(join(root, 's1.jsonl'))).toBe(0o600)
    await store.close('s1')
  })
})

describe('a lock left empty or unreadable (issue #8)', () => {
  it.each([
    ['an empty lock file, which a process killed between create and pid write leaves', ''],
    ['a lock whose content names no process', 'not a pid\n'],
  ])('takes over %s', async (_what, content) => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await first.append('s1', range(0, 1))
    await first.close('s1')
    await writeFile(join(root, 's1.lock'), content)
    const store = new JsonlSessionStore({ root })
    expect((await store.open('s1')).events).toEqual(range(0, 1))
    await store.close('s1')
  })
})

describe('disposing the store plugin (issue #8)', () => {
  it('saves and closes the sessions still open, releases their locks, and fails later appends closed', async () => {
    const root = await tempRoot()
    const ctx = new Context()
    await ctx.plugin(SessionService)
    const fiber = await ctx.plugin(plugin, { root })
    const session = await ctx.sessions.create({ id: 'd1', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await session.flush()
    session.append('turn/end', { turn: 1, reason: 'completed' })
    await fiber.dispose()
    await gone(join(root, 'd1.lock'))
    // The store's pid file (lock.ts) goes with it.
    expect(await readdir(root)).toEqual(['d1.jsonl'])
    expect(() => session.append('turn/start', { turn: 2 })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
    const reader = new JsonlSessionStore({ root })
    expect((await reader.load('d1')).events.map((event) => event.type)).toEqual(['turn/start', 'turn/end'])
  })

  it('lets the owner of a session end its work before the session closes', async () => {
    const root = await tempRoot()
    const ctx = new Context()
    await ctx.plugin(SessionService)
    const fiber = await ctx.plugin(plugin, { root })
    const session = await ctx.sessions.create({ id: 'd2', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    session.beforeClose(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      session.append('turn/end', { turn: 1, reason: 'interrupted' })
    })
    await fiber.dispose()
    const reader = new JsonlSessionStore({ root })
    expect((await reader.load('d2')).events.map((event) => event.data)).toEqual([{ turn: 1 }, { turn: 1, reason: 'interrupted' }])
  })

  it('closes what a store holds when the store itself is disposed', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 1))
    await store.dispose()
    await gone(join(root, 's1.lock'))
    expect((await store.load('s1')).events).toEqual(range(0, 1))
    await expect(store.append('s1', range(1, 2))).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
  })
})

describe('a log ctx.sessions refuses, with a torn last line', () => {
  it.each([
    ['an event of a type no loaded plugin defines', '{"seq":1,"type":"foo/bar","time":"2026-01-01T00:00:01.000Z","data":{}}'],
    ['a core event of the wrong shape', '{"seq":1,"type":"user/message","time":"2026-01-01T00:00:01.000Z","data":{"message":42}}'],
  ])('is left byte for byte as it was when opened: %s (the refusal says rein leaves the log as it is)', async (_what, line) => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await first.append('s1', range(0, 1))
    await first.close('s1')
    const file = join(root, 's1.jsonl')
    await appendFile(file, `${line}\n{"seq":2,"ty`)
    const bytes = await readFile(file)
    const ctx = new Context()
    await ctx.plugin(SessionService)
    ctx.sessions.registerStore(new JsonlSessionStore({ root }))
    await expect(ctx.sessions.open('s1')).rejects.toMatchObject({ code: expect.stringMatching(/^SESSION_(CORRUPT|UNKNOWN_EVENT)$/) })
    expect((await readFile(file)).equals(bytes)).toBe(true)
    // Refused, it is closed again: another open meets the same refusal, not a lock.
    await expect(ctx.sessions.open('s1')).rejects.toMatchObject({ code: expect.stringMatching(/^SESSION_(CORRUPT|UNKNOWN_EVENT)$/) })
  })
})
