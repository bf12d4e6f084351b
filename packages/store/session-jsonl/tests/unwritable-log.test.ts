// A log rein can read but not write, and a folder where a log should be: each is said as what it
// is, naming the path, not as "cannot read session … check the folder's permissions and free space".
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { JsonlSessionStore } from '../src/index.ts'
import { header, range } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const { openSync } = fs

afterEach(() => {
  fs.openSync = openSync
  syncBuiltinESMExports()
})

/** Tests run as root, whom a 0400 mode does not stop: opening `file` for writing is refused as a user would be. */
function refuseWritingTo(file: string): void {
  fs.openSync = (...args: Parameters<typeof openSync>) => {
    const [path, flags] = args
    if (path === file && flags !== 'r') throw Object.assign(new Error(`EACCES: permission denied, open '${file}'`), { code: 'EACCES' })
    return openSync(...args)
  }
  syncBuiltinESMExports()
}

async function storedSession(root: string): Promise<void> {
  const store = new JsonlSessionStore({ root })
  await store.create(header('s1'))
  await store.append('s1', range(0, 1))
  await store.close('s1')
}

describe('a session log rein cannot write', () => {
  it('a log that can be read but not written is said to be not writable, naming it', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const file = join(root, 's1.jsonl')
    refuseWritingTo(file)
    const store = new JsonlSessionStore({ root })
    expect((await store.load('s1')).events).toHaveLength(1)
    const error = await store.open('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', details: { id: 's1', file }, cause: { code: 'EACCES' } })
    const message = (error as Error).message
    expect(message).toContain(`the log of session s1 (${file}) is not writable`)
    expect(message).not.toMatch(/cannot read|free space/)
  })

  it('a folder where the log should be is said to be one, naming the path', async () => {
    const root = await tempRoot()
    const file = join(root, 's1.jsonl')
    await mkdir(file)
    const store = new JsonlSessionStore({ root })
    // Each call is started only when the one before has settled: started together, the second
    // could reject while the first was still awaited, with no handler yet attached to it.
    for (const attempt of [() => store.open('s1'), () => store.load('s1')]) {
      const error = await attempt().catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', details: { id: 's1', file } })
      expect((error as Error).message).toContain(`a folder stands where the log of session s1 should be (${file})`)
      expect((error as Error).message).not.toMatch(/permissions and free space/)
    }
  })

  it('a file where the sessions folder should be is said to be one, not a matter of permissions or free space', async () => {
    const root = join(await tempRoot(), 'sessions')
    await writeFile(root, 'not a folder')
    const store = new JsonlSessionStore({ root })
    for (const attempt of [() => store.create(header('s1')), () => store.list(), () => store.load('s1'), () => store.folder('s1')]) {
      const error = await attempt().catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'SESSION_IO_FAILED' })
      expect((error as Error).message).toContain('a file stands where a folder of that path should be')
      expect((error as Error).message).not.toMatch(/permissions and free space/)
    }
  })

  it('a FIFO where the log should be is refused at once, not waited on for a writer that never comes, by load, open and list', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const file = join(root, 'f1.jsonl')
    execFileSync('mkfifo', [file])
    const store = new JsonlSessionStore({ root })
    for (const attempt of [() => store.load('f1'), () => store.open('f1')]) {
      const error = await attempt().catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', details: { id: 'f1', file } })
      expect((error as Error).message).toContain(`something other than a file stands where the log of session f1 should be (${file})`)
    }
    const unreadable: string[] = []
    expect((await store.list({ unreadable: (id) => unreadable.push(id) })).map((summary) => summary.id)).toEqual(['s1'])
    expect(unreadable).toEqual(['f1'])
  })

  it('a link where the log should be is not written through: open refuses it and leaves the file it points to as it was', async () => {
    const root = await tempRoot()
    const elsewhere = await tempRoot()
    await storedSession(elsewhere)
    const target = join(elsewhere, 's1.jsonl')
    // A torn tail and a wide mode: open would cut the one and narrow the other, on a log it owns.
    await writeFile(target, `${await readFile(target, 'utf8')}{"seq":1,"ty`, { mode: 0o644 })
    fs.chmodSync(target, 0o644)
    const before = await readFile(target)
    const file = join(root, 's1.jsonl')
    await symlink(target, file)
    const store = new JsonlSessionStore({ root })
    const error = await store.open('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', details: { id: 's1', file } })
    expect((error as Error).message).toContain(`a link stands where the log of session s1 should be (${file})`)
    expect(await readFile(target)).toEqual(before)
    expect((await stat(target)).mode & 0o777).toBe(0o644)
    // Read through, as rein show would: nothing is written.
    expect((await store.load('s1')).events).toEqual(range(0, 1))
    await store.dispose()
    expect(fs.existsSync(join(root, 's1.lock'))).toBe(false)
  })
})
