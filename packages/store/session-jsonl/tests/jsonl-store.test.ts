import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { JsonlSessionStore } from '../src/index.ts'
import { event, header, range, userMessage } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const readdirNames = async (root: string) => (await readdir(root)).sort()
/** A store's pid file (lock.ts), which its locks are hard links to, while the store lives. */
const PID_FILE = expect.stringMatching(new RegExp(`^\\.owner\\.lock\\.${process.pid}\\.[0-9a-f-]{36}\\.tmp$`))
const lines = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown)

describe('JsonlSessionStore round trip', () => {
  it('reads back the header and events it wrote, from another store', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    const events = [event(0, 'turn/start', { turn: 0 }), userMessage(1, 'hello there'), event(2, 'turn/end', { turn: 0, reason: 'completed' })]
    await store.create(header('s1', { parentSessionId: 'p0', depth: 1 }))
    await store.append('s1', events)
    await store.close('s1')
    expect(await new JsonlSessionStore({ root }).load('s1')).toEqual({ header: header('s1', { parentSessionId: 'p0', depth: 1 }), events })
  })

  it('writes the header as line 1 marked as a rein session, then one event per line', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 2))
    await store.close('s1')
    expect(await lines(join(root, 's1.jsonl'))).toEqual([{ kind: 'rein-session', ...header('s1') }, event(0), event(1)])
  })

  it('continues after open where the log ended', async () => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await first.append('s1', range(0, 2))
    await first.close('s1')
    const second = new JsonlSessionStore({ root })
    expect(await second.open('s1')).toEqual({ header: header('s1'), events: range(0, 2) })
    await second.append('s1', range(2, 4))
    await second.close('s1')
    expect((await second.load('s1')).events).toEqual(range(0, 4))
  })

  it('creates the root folder with its parents', async () => {
    const root = join(await tempRoot(), 'a', 'b')
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 1))
    await store.close('s1')
    expect((await store.load('s1')).events).toEqual(range(0, 1))
  })

  it('writes sessions open at the same time side by side (their fsyncs off the event loop)', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await store.create(header('s1'))
    await store.create(header('s2'))
    await Promise.all([store.append('s1', range(0, 3)), store.append('s2', range(0, 2))])
    await Promise.all([store.flush('s1'), store.flush('s2')])
    await Promise.all([store.append('s1', [event(3)]), store.append('s2', [event(2)])])
    await Promise.all([store.close('s1'), store.close('s2')])
    expect((await store.load('s1')).events).toEqual(range(0, 4))
    expect((await store.load('s2')).events).toEqual(range(0, 3))
  })

  it('makes the root folder again when it was removed after the store first made it', async () => {
    const root = join(await tempRoot(), 'sessions')
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.close('s1')
    await rm(root, { recursive: true })
    await store.create(header('s2'))
    await store.append('s2', range(0, 1))
    await store.close('s2')
    expect((await store.load('s2')).events).toEqual(range(0, 1))
  })

  it.each(['', '.hidden', '../escape', 'a/b', 'a b', 'x'.repeat(129), '-dash'])('rejects the session id %j', async (id) => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await expect(store.create(header(id))).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
    await expect(store.open(id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
    await expect(store.load(id)).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
  })

  it('reports an unknown session as not found', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await expect(store.load('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    await expect(store.open('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('says an id that differs only in case from a stored one is not found, naming the stored id, where the file system ignores case', async () => {
    // A file system that ignores case (macOS, Windows) finds s1.jsonl under S1.jsonl: a hard link is that here.
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 1))
    await store.close('s1')
    await link(join(root, 's1.jsonl'), join(root, 'S1.jsonl'))
    for (const attempt of [() => store.load('S1'), () => store.open('S1')]) {
      const error = await attempt().catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'SESSION_NOT_FOUND', details: { id: 'S1', storedId: 's1' } })
      expect((error as Error).message).toContain('s1')
    }
    expect(existsSync(join(root, 'S1.lock'))).toBe(false)
    // A header naming another id whose file is not this one is still corruption; so is a link made by hand.
    await writeFile(join(root, 'S2.jsonl'), `${JSON.stringify({ kind: 'rein-session', ...header('s2') })}\n`)
    await expect(store.load('S2')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    await store.create(header('s3'))
    await store.append('s3', range(0, 1))
    await store.close('s3')
    await symlink(join(root, 's3.jsonl'), join(root, 'S3.jsonl'))
    await expect(store.load('S3')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
  })

  it('refuses appends to a session this store has not opened', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await expect(store.append('s1', range(0, 1))).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
    await expect(store.flush('s1')).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
  })
})

describe('JsonlSessionStore sequencing and batching', () => {
  it('rejects appends whose seq does not continue the log', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await store.create(header('s1'))
    await expect(store.append('s1', [event(1)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH', details: { expected: 0, got: 1 } })
    await expect(store.append('s1', [event(0), event(2)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH', details: { expected: 1, got: 2 } })
    await store.append('s1', [event(0)])
    await expect(store.append('s1', [event(0)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH', details: { expected: 1, got: 0 } })
    await store.close('s1')
    expect((await store.load('s1')).events).toEqual([event(0)])
  })

  it('rejects data JSON cannot carry and queues nothing of that append', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await store.create(header('s1'))
    await expect(store.append('s1', [event(0), { ...event(1), data: Number.NaN }])).rejects.toMatchObject({ code: 'NOT_JSON' })
    await store.append('s1', [event(0)])
    await store.close('s1')
    expect((await store.load('s1')).events).toEqual([event(0)])
  })

  it('writes many unawaited appends in order by the flush', async () => {
    const store = new JsonlSessionStore({ root: await tempRoot() })
    await store.create(header('s1'))
    const appends = range(0, 200).map((item) => store.append('s1', [item]))
    await store.flush('s1')
    await Promise.all(appends)
    expect((await store.load('s1')).events).toEqual(range(0, 200))
    await store.close('s1')
  })

  it('keeps appended events in memory until the flush, which makes them durable before it resolves', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root, batchDelayMs: 3_600_000 })
    await store.create(header('s1'))
    await store.append('s1', range(0, 1))
    await store.flush('s1')
    expect((await store.load('s1')).events).toEqual(range(0, 1))
    await store.append('s1', range(1, 3))
    expect((await store.load('s1')).events).toEqual(range(0, 1))
    await store.flush('s1')
    expect((await store.load('s1')).events).toEqual(range(0, 3))
    await store.close('s1')
  })

  it('writes queued events without a flush once the batch delay passes', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', range(0, 2))
    await expect.poll(() => existsSync(join(root, 's1.jsonl')), { timeout: 30_000 }).toBe(true)
    expect((await store.load('s1')).events).toEqual(range(0, 2))
    await store.close('s1')
  })

  it('puts events written without a flush in the file without an fsync, where a SIGKILL does not lose them; the next flush fsyncs them', async () => {
    const root = await tempRoot()
    const script = fileURLToPath(new URL('fixtures/write-then-hold.ts', import.meta.url))
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    let out = ''
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); if (out.includes('written')) resolve() })
        child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before writing: ${out}`)))
      })
    } finally {
      child.kill('SIGKILL')
      await exited
    }
    // The file is published with its folder (2), a write waits for no disk, a flush covers what a write left.
    expect(JSON.parse(out.split('\n')[0]!)).toEqual({ fsyncs: { publish: 2, write: 0, flushAfterWrite: 1, flushWithNothingNew: 0, writeThenFlush: 1, lastWrite: 0 } })
    expect((await new JsonlSessionStore({ root }).load('s1')).events).toEqual(range(0, 6))
  })

  it('fsyncs for a flush or close that races a write, and recovers from an fsync that failed after a write', async () => {
    const root = await tempRoot()
    const script = fileURLToPath(new URL('fixtures/write-races.ts', import.meta.url))
    const child = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { encoding: 'utf8' })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({ writeThenFlush: 1, writeThenClose: 1, failedFlush: ['SESSION_WRITE_FAILED', 'resolved'] })
    expect((await new JsonlSessionStore({ root }).load('race')).events).toEqual(range(0, 3))
  })
})

describe('JsonlSessionStore publication', () => {
  it('leaves no file and lists nothing until the first flush', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root, batchDelayMs: 3_600_000 })
    await store.create(header('s1'))
    await store.append('s1', range(0, 1))
    expect(existsSync(join(root, 's1.jsonl'))).toBe(false)
    expect(await store.list()).toEqual([])
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    await store.flush('s1')
    expect((await store.load('s1')).events).toEqual(range(0, 1))
    await store.close('s1')
  })

  it('writes nothing for a session closed without events, and frees its id', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.close('s1')
    expect(await readdirNames(root)).toEqual([PID_FILE])
    await store.create(header('s1'))
    await store.close('s1')
    await store.dispose()
    expect(await readdirNames(root)).toEqual([])
  })

  it('refuses to create a session whose file exists', async () => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await first.append('s1', range(0, 1))
    await first.close('s1')
    await expect(new JsonlSessionStore({ root }).create(header('s1'))).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    await expect(first.create(header('s1'))).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
  })

  it('never overwrites a file that appeared after create: the flush fails with SESSION_EXISTS', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    const other = `${JSON.stringify({ kind: 'rein-session', ...header('s1', { cwd: '/other' }) })}\n`
    await writeFile(join(root, 's1.jsonl'), other)
    await store.append('s1', range(0, 1))
    await expect(store.flush('s1')).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    expect(await readFile(join(root, 's1.jsonl'), 'utf8')).toBe(other)
    expect(await readdirNames(root)).toEqual([PID_FILE, 's1.jsonl', 's1.lock'])
    await expect(store.close('s1')).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    await store.dispose()
    expect(await readdirNames(root)).toEqual(['s1.jsonl'])
  })
})
