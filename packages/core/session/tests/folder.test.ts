import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import SessionService, { MemorySessionStore, sessionMemory, type SessionStore } from '../src/index.ts'

const mode = async (path: string) => (await stat(path)).mode & 0o777
const gone = (path: string) => expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' })

/** The in-memory store with a folder of its own. */
class FolderStore extends MemorySessionStore implements SessionStore {
  constructor(readonly folder: (id: string) => Promise<string>) {
    super()
  }
}

async function boot() {
  const root = new Context()
  const service = await root.plugin(SessionService)
  const store = await root.plugin(sessionMemory)
  return { root, service, store }
}

describe('Session.folder (issue #9)', () => {
  it('gives a session of a store without folders a private temporary folder, the same on every call', async () => {
    const { root } = await boot()
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    const folder = await session.folder()
    expect(isAbsolute(folder)).toBe(true)
    expect((await stat(folder)).isDirectory()).toBe(true)
    expect(await mode(folder)).toBe(0o700)
    expect(await mode(dirname(folder))).toBe(0o700)
    expect(await session.folder()).toBe(folder)
    const other = await root.sessions.create({ id: 's2', cwd: '/w' })
    expect(await other.folder()).not.toBe(folder)
    await root.fiber.dispose()
  })

  it('names a session\'s folder without making it: a temporary one, or the store\'s by its folderPath', async () => {
    const { root } = await boot()
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    const path = session.folderPath()
    expect(path).toBeDefined()
    await gone(path!)
    expect(await session.folder()).toBe(path)
    await root.fiber.dispose()

    const other = new Context()
    await other.plugin(SessionService)
    const store = Object.assign(new FolderStore(() => Promise.resolve('/kept/s2.files')), { folderPath: (id: string) => `/kept/${id}.files` })
    await other.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
    const kept = await other.sessions.create({ id: 's2', cwd: '/w' })
    expect(kept.folderPath()).toBe('/kept/s2.files')
    await other.fiber.dispose()
  })

  it('gives sessions whose ids differ only in characters a file name cannot hold, or in case, folders of their own', async () => {
    const { root } = await boot()
    const ids = ['a_b', 'a/b', 'a:b', 'a b', 'a_b~x', '..', `${'x'.repeat(40)}1`, `${'x'.repeat(40)}2`, 'abc', 'Abc']
    const paths = await Promise.all(ids.map(async (id) => (await root.sessions.create({ id, cwd: '/w' })).folderPath()))
    // Distinct even where the file system ignores case (macOS, Windows).
    expect(new Set(paths.map((path) => path!.toLowerCase())).size).toBe(ids.length)
    for (const path of paths) expect(dirname(path!)).toBe(dirname(paths[0]!))
    await root.fiber.dispose()
  })

  it('removes the temporary folders when the service is disposed', async () => {
    const { root, service } = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    const folder = await session.folder()
    await service.dispose()
    await expect(stat(folder)).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(dirname(folder))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('removes the temporary folders when the store is unregistered, and makes new ones for the next store', async () => {
    const { root, store } = await boot()
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    const folder = await session.folder()
    await store.dispose()
    await gone(dirname(folder))
    await root.plugin(sessionMemory)
    const next = await (await root.sessions.create({ id: 's1', cwd: '/w' })).folder()
    expect((await stat(next)).isDirectory()).toBe(true)
    await root.fiber.dispose()
    await gone(next)
  })

  it('keeps a session id from leading its temporary folder elsewhere', async () => {
    const { root } = await boot()
    const session = await root.sessions.create({ id: '../../escape', cwd: '/w' })
    const folder = await session.folder()
    const parent = dirname(folder)
    expect(dirname(parent)).toBe(tmpdir())
    await root.fiber.dispose()
    await gone(parent)
  })

  it('uses the store\'s folder when the store has one', async () => {
    const base = await mkdtemp(join(tmpdir(), 'rein-folder-store-'))
    try {
      const asked: string[] = []
      const store = new FolderStore(async (id) => {
        asked.push(id)
        return join(base, id)
      })
      const root = new Context()
      await root.plugin(SessionService)
      await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
      const session = await root.sessions.create({ id: 's1', cwd: '/w' })
      expect(await session.folder()).toBe(join(base, 's1'))
      expect(await session.folder()).toBe(join(base, 's1'))
      expect(asked).toEqual(['s1'])
      await root.fiber.dispose()
    } finally {
      await rm(base, { recursive: true, force: true })
    }
  })

  it('asks the store again after a folder could not be made', async () => {
    let failures = 1
    const store = new FolderStore(async (id) => {
      if (failures-- > 0) throw new Error('disk full')
      return `/made/${id}`
    })
    const root = new Context()
    await root.plugin(SessionService)
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    await expect(session.folder()).rejects.toThrow('disk full')
    expect(await session.folder()).toBe('/made/s1')
    await root.fiber.dispose()
  })

  it('finds an open session\'s folder by its id, and refuses one that is not open', async () => {
    const { root } = await boot()
    const session = await root.sessions.create({ id: 'open-one', cwd: '/w' })
    expect(await root.sessions.folder('open-one')).toBe(await session.folder())
    await session.close()
    await expect(root.sessions.folder('open-one')).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
    await expect(root.sessions.folder('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
  })

  it('names a stored session\'s folder to a reader while it reads, without opening the session or making the folder', async () => {
    const made: string[] = []
    const store = Object.assign(new FolderStore(async (id) => { made.push(id); return `/kept/${id}.files` }), { folderPath: (id: string) => `/kept/${id}.files` })
    const root = new Context()
    await root.plugin(SessionService)
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(store) })
    await (await root.sessions.create({ id: 'stored', cwd: '/w' })).close()
    const read = await root.sessions.reading('stored', () => root.sessions.folder('stored'))
    expect(read).toBe('/kept/stored.files')
    expect(made).toEqual([])
    // Only while it reads: after, the folder is again handed out to the session's opener only.
    await expect(root.sessions.folder('stored')).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
    // Still free: a writer opens it as if nothing had read it.
    const session = await root.sessions.open('stored')
    await session.close()
    await root.fiber.dispose()
  })

  it('says a reader cannot get the folder of a session whose store names none without making it', async () => {
    const { root } = await boot()
    await (await root.sessions.create({ id: 'kept', cwd: '/w' })).close()
    await expect(root.sessions.reading('kept', () => root.sessions.folder('kept'))).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN', message: expect.stringContaining('without opening it') })
  })
})
