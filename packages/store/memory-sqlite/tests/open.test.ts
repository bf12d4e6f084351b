import { spawn, spawnSync } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { SCHEMA_VERSION, SqliteMemoryStore } from '../src/index.ts'
import { entry, openStore, tempRoot } from './temp-root.ts'

const HOLD_LOCK = new URL('./fixtures/hold-lock.ts', import.meta.url).pathname

const modeOf = async (path: string) => (await stat(path)).mode & 0o777

/** Another process holding `file`'s write lock (BEGIN IMMEDIATE) until `release`, which resolves to its exit code. */
async function holdLock(file: string) {
  const holder = spawn(process.execPath, ['--import', 'tsx', HOLD_LOCK, file], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve))
  await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('locked')) resolve() }))
  return { release: () => { holder.stdin.end(); return exited } }
}

describe('opening the database file', () => {
  it('creates the file 0600 in a new 0700 folder, WAL files 0600 too, at the current schema version', async () => {
    const folder = join(await tempRoot(), 'home', '.rein')
    const store = await openStore({ file: join(folder, 'memory.db') })
    await store.insert(entry())
    expect(await modeOf(folder)).toBe(0o700)
    expect(await modeOf(store.file)).toBe(0o600)
    expect(await modeOf(`${store.file}-wal`)).toBe(0o600)
    expect(await modeOf(`${store.file}-shm`)).toBe(0o600)
    const raw = new Database(store.file, { readonly: true })
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal')
    raw.close()
  })

  it('leaves the mode of a folder that already exists alone: a 0755 folder stays 0755', async () => {
    const folder = join(await tempRoot(), 'shared')
    await mkdir(folder, { mode: 0o755 })
    await chmod(folder, 0o755)
    const store = await openStore({ file: join(folder, 'memory.db') })
    expect(await modeOf(folder)).toBe(0o755)
    expect(await modeOf(store.file)).toBe(0o600)
  })

  it('makes every missing folder on the way 0700', async () => {
    const root = await tempRoot()
    await openStore({ file: join(root, 'a', 'b', 'memory.db') })
    expect(await modeOf(join(root, 'a'))).toBe(0o700)
    expect(await modeOf(join(root, 'a', 'b'))).toBe(0o700)
  })

  it('narrows an existing file readable by others to 0600', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, '')
    await chmod(file, 0o644)
    await openStore({ file })
    expect(await modeOf(file)).toBe(0o600)
  })

  it('migrates an empty file to the current schema and keeps what it writes', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, '')
    const store = await openStore({ file })
    await store.insert(entry({ id: 'first' }))
    expect((await store.all()).map((item) => item.id)).toEqual(['first'])
  })

  // What a start on a full disk leaves (seen on a full tmpfs): a zero-byte memory.db, or one with a
  // zero-byte -wal and a -shm SQLite could not finish. Once there is space, the next start works.
  for (const [leftover, sideFiles] of [['alone', false], ['with a zero-byte -wal and a half-made -shm', true]] as const) {
    it(`opens a zero-byte memory.db left by a start on a full disk (${leftover}) as a fresh database, 0600, at the current schema`, async () => {
      const file = join(await tempRoot(), 'memory.db')
      await writeFile(file, '', { mode: 0o600 })
      if (sideFiles) {
        await writeFile(`${file}-wal`, '', { mode: 0o600 })
        await writeFile(`${file}-shm`, Buffer.alloc(8192), { mode: 0o600 })
      }
      const store = await SqliteMemoryStore.open({ file })
      expect(await store.all()).toEqual([])
      await store.insert(entry({ id: 'after-the-full-disk' }))
      await store.close()
      expect(await modeOf(file)).toBe(0o600)
      const raw = new Database(file, { readonly: true })
      expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal')
      raw.close()
      const again = await openStore({ file })
      expect((await again.all()).map((item) => item.id)).toEqual(['after-the-full-disk'])
    })
  }

  it('refuses a file written by a newer schema version, naming it, and leaves it as it was', async () => {
    const file = join(await tempRoot(), 'memory.db')
    const raw = new Database(file)
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
    raw.exec('CREATE TABLE future (x)')
    raw.close()
    const failure = SqliteMemoryStore.open({ file })
    await expect(failure).rejects.toMatchObject({ code: 'MEMORY_STORE_TOO_NEW', details: { file, version: SCHEMA_VERSION + 1 } })
    await expect(failure).rejects.toThrow(file)
    await expect(failure).rejects.toThrow(/newer than this rein reads/)
    const after = new Database(file, { readonly: true })
    expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1)
    after.close()
  })

  it('calls a garbage file MEMORY_STORE_CORRUPT, naming it', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, Buffer.from('this is not a database at all, just some garbage bytes '.repeat(200)))
    const failure = SqliteMemoryStore.open({ file })
    await expect(failure).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', details: { file } })
    await expect(failure).rejects.toThrow(file)
  })

  it('a damaged file\'s advice says to move its -wal and -shm aside with it: they can hold its latest entries, which a new file beside them would drop', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, Buffer.from('damaged '.repeat(512)))
    await writeFile(`${file}-wal`, Buffer.from('frames of the latest entries'))
    const failure = await SqliteMemoryStore.open({ file }).catch((error: unknown) => error)
    expect(failure).toMatchObject({ code: 'MEMORY_STORE_CORRUPT' })
    expect((failure as Error).message).toContain('move it aside with its -wal and -shm files, if there are any, and rein starts an empty one')
  })

  it('refuses another program\'s SQLite database rather than adding tables to it', async () => {
    const file = join(await tempRoot(), 'other.db')
    const raw = new Database(file)
    raw.exec('CREATE TABLE notes (body TEXT)')
    raw.close()
    await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', details: { file } })
  })

  it('refuses another program\'s database that sets user_version itself (to rein\'s schema version), leaving it as it was, rather than taking it over and failing every call on a missing table', async () => {
    const file = join(await tempRoot(), 'other.db')
    const raw = new Database(file)
    raw.pragma(`user_version = ${SCHEMA_VERSION}`)
    raw.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('kept')")
    raw.close()
    await chmod(file, 0o644)
    const before = await readFile(file)
    await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', message: expect.stringContaining('another program\'s database'), details: { file } })
    expect(await modeOf(file)).toBe(0o644)
    expect((await readFile(file)).equals(before)).toBe(true)
  })

  it('leaves every file it refuses byte for byte and mode as it was: a newer schema, another program\'s database', async () => {
    const cases: [string, (raw: Database.Database) => void, string][] = [
      ['newer.db', (raw) => { raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`); raw.exec('CREATE TABLE future (x)') }, 'MEMORY_STORE_TOO_NEW'],
      ['other.db', (raw) => { raw.exec('CREATE TABLE notes (body TEXT)'); raw.exec("INSERT INTO notes VALUES ('kept')") }, 'MEMORY_STORE_CORRUPT'],
    ]
    for (const [name, fill, code] of cases) {
      const file = join(await tempRoot(), name)
      const raw = new Database(file)
      fill(raw)
      raw.close()
      await chmod(file, 0o644)
      const before = await readFile(file)
      await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code })
      expect((await stat(file)).mode & 0o777).toBe(0o644)
      expect((await readFile(file)).equals(before)).toBe(true)
    }
  })

  it('calls a new file another process holds locked MEMORY_STORE_LOCKED, naming it, after the busy timeout', async () => {
    // A new file is migrated, which needs the write lock.
    const file = join(await tempRoot(), 'memory.db')
    const holder = await holdLock(file)
    const failure = SqliteMemoryStore.open({ file, busyTimeoutMs: 200 })
    await expect(failure).rejects.toMatchObject({ code: 'MEMORY_STORE_LOCKED', details: { file } })
    await expect(failure).rejects.toThrow(file)
    expect(await holder.release()).toBe(0)
    // Once the other process is done, the file opens.
    const store = await openStore({ file })
    expect(await store.all()).toEqual([])
  }, 30_000)

  it('opens and reads a file at the current schema while another process holds its write lock: opening takes no write lock when no migration is due', async () => {
    const first = await openStore()
    await first.insert(entry({ id: 'kept' }))
    await first.close()
    const holder = await holdLock(first.file)
    try {
      const store = await openStore({ file: first.file, busyTimeoutMs: 200 })
      expect((await store.all()).map((item) => item.id)).toEqual(['kept'])
    } finally {
      expect(await holder.release()).toBe(0)
    }
  }, 30_000)

  it('fails with MEMORY_STORE_FAILED, naming the file, when its folder cannot be made', async () => {
    const root = await tempRoot()
    await writeFile(join(root, 'plain'), '')
    const file = join(root, 'plain', 'memory.db')
    await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', details: { file } })
  })

  it('an existing path it cannot open (a folder where the file should be) is reported as opening it, not creating it; a folder it cannot make as creating it', async () => {
    const root = await tempRoot()
    const file = join(root, 'memory.db')
    await mkdir(file)
    await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', message: expect.stringContaining(`${file}: opening it failed: EISDIR`) })
    await writeFile(join(root, 'plain'), '')
    const under = join(root, 'plain', 'memory.db')
    await expect(SqliteMemoryStore.open({ file: under })).rejects.toMatchObject({ message: expect.stringContaining(`${under}: creating it failed: EEXIST`) })
  })

  it('a FIFO where the file should be is refused MEMORY_STORE_FAILED, naming what it is, instead of hanging the composition on its open', async () => {
    const file = join(await tempRoot(), 'memory.db')
    expect(spawnSync('mkfifo', [file]).status).toBe(0)
    const error = await SqliteMemoryStore.open({ file }).then(() => undefined, (caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'MEMORY_STORE_FAILED', details: { file } })
    expect((error as Error).message).toContain(`${file} is not a regular file (a FIFO)`)
    expect((error as Error).message).toMatch(/set file to/)
  })

  // A device node made in the test's own folder, never the system's: unfixed, opening chmods it.
  it.skipIf(process.getuid?.() !== 0)('a device where the file should be (file: /dev/null) is refused before it is opened: its mode stays, no -journal is made beside it', async () => {
    const folder = await tempRoot()
    const file = join(folder, 'null')
    expect(spawnSync('mknod', [file, 'c', '1', '3']).status).toBe(0)
    await chmod(file, 0o666)
    await expect(SqliteMemoryStore.open({ file })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', message: expect.stringContaining('is not a regular file (a character device)') })
    expect(await modeOf(file)).toBe(0o666)
    expect(await readdir(folder)).toEqual(['null'])
  })

  it('refuses every call after close, and close twice is harmless', async () => {
    const store = await openStore()
    await store.close()
    await store.close()
    // Started one at a time: a call started early could reject with no handler attached yet.
    for (const call of [() => store.insert(entry()), () => store.replace(entry()), () => store.get('x'), () => store.all(), () => store.delete('x'),
      () => store.recall({ scopes: ['user'], limit: 1, now: 1 }), () => store.findSame('user', undefined, 'fact', 'x', 1)]) {
      await expect(call()).rejects.toMatchObject({ code: 'MEMORY_STORE_CLOSED' })
    }
  })
})

describe('opening with options that are not what open() takes', () => {
  it.each([
    ['no options', undefined],
    ['a file that is not text', { file: 42 }],
    ['an empty file name', { file: '' }],
    ['a busy timeout that is not a number of ms', { busyTimeoutMs: 'soon' }],
    ['a negative busy timeout', { busyTimeoutMs: -1 }],
  ])('%s: INVALID_ARGS naming the option, before any file is touched', async (_case, given) => {
    const folder = await tempRoot()
    const file = join(folder, 'memory.db')
    const options = given === undefined ? undefined : { file, ...given }
    const error = await SqliteMemoryStore.open(options as never).then(() => undefined, (caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'ReinError', code: 'INVALID_ARGS' })
    expect((error as Error).message).toMatch(/file|busyTimeoutMs|options/)
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('two processes opening a new file at once', () => {
  it('takes the other\'s first migration, committed between its looks at the file, as rein\'s, not another program\'s tables', async () => {
    const { migrate } = await import('../src/schema.ts')
    const file = join(await tempRoot(), 'memory.db')
    const first = new Database(file)
    const second = new Database(file)
    // The other process migrates right after this one's first read of the file.
    let raced = false
    const race = <T>(read: () => T): T => {
      const result = read()
      if (!raced) {
        raced = true
        migrate(first, file)
      }
      return result
    }
    const pragma = second.pragma.bind(second)
    const prepare = second.prepare.bind(second)
    second.pragma = ((...args: Parameters<typeof pragma>) => race(() => pragma(...args))) as typeof pragma
    second.prepare = ((...args: Parameters<typeof prepare>) => {
      const statement = prepare(...args)
      const get = statement.get.bind(statement)
      statement.get = ((...values: unknown[]) => race(() => get(...values))) as typeof statement.get
      return statement
    }) as typeof prepare
    try {
      expect(() => migrate(second, file)).not.toThrow()
      expect(raced).toBe(true)
      expect(first.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
    } finally {
      first.close()
      second.close()
    }
  })
})
