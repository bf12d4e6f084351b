import { existsSync } from 'node:fs'
import { chmod, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import SessionService from '@rein/session'
import { describe, expect, it } from 'vitest'
import * as plugin from '../src/index.ts'
import { JsonlSessionStore } from '../src/index.ts'
import { header, range } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const mode = async (path: string) => (await stat(path)).mode & 0o777

describe('a session\'s folder (issue #9)', () => {
  it('is a private folder beside the log, and the session still lists and loads', async () => {
    const base = await tempRoot()
    const root = join(base, 'sessions')
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 2))
    const folder = await store.folder('s1')
    expect(folder).toBe(join(root, 's1.files'))
    expect(await mode(folder)).toBe(0o700)
    await writeFile(join(folder, 'spill.txt'), 'x'.repeat(10))
    await store.close('s1')
    expect((await store.list()).map((summary) => summary.id)).toEqual(['s1'])
    expect((await store.load('s1')).events).toHaveLength(2)
    expect((await store.open('s1')).events).toHaveLength(2)
    await store.close('s1')
    expect(await store.folder('s1')).toBe(folder)
  })

  it('has a path the store names without making the folder, the one folder() makes', async () => {
    const root = join(await tempRoot(), 'sessions')
    const store = new JsonlSessionStore({ root })
    const path = store.folderPath('s1')
    expect(existsSync(path)).toBe(false)
    expect(await store.folder('s1')).toBe(path)
    expect(() => store.folderPath('../x')).toThrow(expect.objectContaining({ code: 'INVALID_SESSION_ID' }))
  })

  it('is absolute when the root is relative', async () => {
    const base = await tempRoot()
    const store = new JsonlSessionStore({ root: relative(process.cwd(), join(base, 'sessions')) })
    expect(await store.folder('s1')).toBe(join(base, 'sessions', 's1.files'))
  })

  it('never shares a name with another session\'s log or lock', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    // Sessions "a.jsonl" and "a.lock" would own the names "a"'s log and lock have, were folders named "<id>/".
    await store.create(header('a'))
    await store.append('a', range(0, 1))
    await store.flush('a')
    for (const id of ['a.jsonl', 'a.lock', 'a.files']) {
      await store.create(header(id))
      await store.append(id, range(0, 1))
      await store.flush(id)
      await store.folder(id)
    }
    await store.folder('a')
    await store.dispose()
    expect((await store.list()).map((summary) => summary.id).sort()).toEqual(['a', 'a.files', 'a.jsonl', 'a.lock'])
  })

  it('refuses an id that would put the folder outside the root', async () => {
    const base = await tempRoot()
    const root = join(base, 'sessions')
    await mkdir(root)
    const store = new JsonlSessionStore({ root })
    for (const id of ['../escape', '..', '.', '', '/tmp/escape', 'a/../../escape', `${base}/x`, 'a\0b', '.hidden', `x${'y'.repeat(200)}`]) {
      await expect(store.folder(id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
    }
    expect(await readdir(base)).toEqual(['sessions'])
    expect(await readdir(root)).toEqual([])
  })

  it('refuses a folder path that is a link or a file, and leaves what it points to alone', async () => {
    const base = await tempRoot()
    const root = join(base, 'sessions')
    await mkdir(join(base, 'elsewhere'), { mode: 0o755 })
    await chmod(join(base, 'elsewhere'), 0o755)
    await mkdir(root)
    await symlink(join(base, 'elsewhere'), join(root, 'linked.files'))
    await writeFile(join(root, 'plain.files'), '')
    const store = new JsonlSessionStore({ root })
    await expect(store.folder('linked')).rejects.toMatchObject({ code: 'SESSION_IO_FAILED' })
    await expect(store.folder('plain')).rejects.toMatchObject({ code: 'SESSION_IO_FAILED' })
    expect(await mode(join(base, 'elsewhere'))).toBe(0o755)
  })

  it('is what Session.folder() gives a session of this store', async () => {
    const root = join(await tempRoot(), 'sessions')
    const ctx = new Context()
    await ctx.plugin(SessionService)
    await ctx.plugin(plugin, { root })
    const session = await ctx.sessions.create({ id: 'p1', cwd: '/w' })
    expect(await session.folder()).toBe(join(root, 'p1.files'))
    await ctx.fiber.dispose()
    // The store's folders are the user's: they outlive the process.
    expect((await stat(join(root, 'p1.files'))).isDirectory()).toBe(true)
  })
})
