// A checkpoint log its owner made read-only (chmod 0400) is still read: a plan, `rein show`, a dry
// run list its checkpoints, and a read changes nothing, its mode included. Only a record about to
// be written needs the log writable; without that it fails clearly, and nothing is lost.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { appendFile, chmod, chown, cp, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { BLOB_FOLDER, JsonlCheckpointStore, LOG_FILE } from '../src/index.ts'
import { openStore as open, tempRoot } from './temp-root.ts'

const CHILD = new URL('./fixtures/read-only-child.ts', import.meta.url).pathname
const NOBODY = 65534
/**
 * The tests that run a store as another user need root to hand files over, and that user able to
 * read this repository (its sources and tsx): a clone in a private folder (mktemp -d, as CI makes)
 * is not, and there they are skipped.
 */
const AS_NOBODY = process.getuid?.() === 0 && spawnSync('test', ['-r', CHILD], { uid: NOBODY, gid: NOBODY }).status === 0

function created(path: string, after: string, anchor = 't1'): CheckpointEntry {
  return { anchor, root: '/w', path, existed: false, before: null, after: Buffer.from(after) }
}

const modeOf = async (file: string) => (await stat(file)).mode & 0o7777

/** A session s1 with one record (path `a`) and a torn last line, its log then given `mode`. */
async function readOnlyLog(mode: number) {
  const { store, base } = await open()
  await store.append('s1', created('a', 'one'))
  await store.close()
  const log = join(base, 's1', LOG_FILE)
  await appendFile(log, '{"anchor":"t2","se')
  await chmod(log, mode)
  return { base, log, bytes: await readFile(log) }
}

describe('a checkpoint log made read-only', () => {
  it('is read (records, pruned, size, contents) and keeps its mode and every byte', async () => {
    const { base, log, bytes } = await readOnlyLog(0o444)
    const { store } = await open({}, base)
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
    expect([...await store.pruned('s1')]).toEqual([])
    expect((await store.size('s1')).bytes).toBeGreaterThan(bytes.length)
    expect(Buffer.from(await store.blob('s1', contentHash(Buffer.from('one')))).toString()).toBe('one')
    await store.close()
    expect(await modeOf(log)).toBe(0o444)
    expect((await readFile(log)).equals(bytes)).toBe(true)
  })

  it('refuses a record with CHECKPOINT_FAILED, saying the log is read-only, and loses nothing', async () => {
    const { base, log, bytes } = await readOnlyLog(0o400)
    const blobs = await readdir(join(base, 's1', BLOB_FOLDER))
    const { store } = await open({}, base)
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
    const refused = store.append('s1', created('b', 'two', 't2'))
    await expect(refused).rejects.toMatchObject({ name: 'ReinError', code: 'CHECKPOINT_FAILED', details: { file: log } })
    await expect(refused).rejects.toThrow(/read-only.*chmod u\+w/)
    // Nothing written: not the line, not its content, not the torn tail's cut, not the mode.
    expect((await readFile(log)).equals(bytes)).toBe(true)
    expect(await modeOf(log)).toBe(0o400)
    expect(await readdir(join(base, 's1', BLOB_FOLDER))).toEqual(blobs)
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
    // A compaction would replace the file (rename): refused the same way.
    await expect(store.compact('s1', new Set())).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED' })
    expect((await readFile(log)).equals(bytes)).toBe(true)
    // Made writable again, the store records on from the whole lines, the torn tail cut.
    await chmod(log, 0o600)
    expect((await store.append('s1', created('b', 'two', 't2'))).seq).toBe(2)
    expect((await store.records('s1')).map((record) => [record.seq, record.path])).toEqual([[1, 'a'], [2, 'b']])
    expect((await readFile(log, 'utf8')).split('\n').map((line) => line === '' ? '' : JSON.parse(line).seq)).toEqual([1, 2, ''])
  })

  it('is not ready for records, as a command is asked before it runs; a damaged log is not either, and a session with no log yet is', async () => {
    const { base, log, bytes } = await readOnlyLog(0o400)
    const { store } = await open({}, base)
    await expect(store.ready('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED', details: { file: log } })
    expect((await readFile(log)).equals(bytes)).toBe(true)
    await chmod(log, 0o600)
    await expect(store.ready('s1')).resolves.toBeUndefined()
    await appendFile(log, '\nnot a record\n')
    const { store: fresh } = await open({}, base)
    await expect(fresh.ready('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    await expect(fresh.ready('s2')).resolves.toBeUndefined()
    await store.close()
    await fresh.close()
  })

  it('narrows a log readable by others (0644, an older rein\'s) to 0600 when it records, not when it reads', async () => {
    const { base, log } = await readOnlyLog(0o644)
    const { store } = await open({}, base)
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
    expect(await modeOf(log)).toBe(0o644)
    expect((await store.append('s1', created('b', 'two', 't2'))).seq).toBe(2)
    expect(await modeOf(log)).toBe(0o600)
  })

  it.runIf(process.getuid?.() === 0)('is read by a user who may not write it (no EACCES), and refuses that user\'s record clearly', async () => {
    const { base, log, bytes } = await readOnlyLog(0o400)
    // Root without its capabilities may read the 0400 log, and not open it for writing, as any owner.
    const { records, append } = await withoutPrivileges(base)
    expect(records).toEqual({ value: ['a'] })
    expect(append).toMatchObject({ code: 'CHECKPOINT_FAILED', message: expect.stringMatching(/read-only.*chmod u\+w/) })
    expect(await modeOf(log)).toBe(0o400)
    expect((await readFile(log)).equals(bytes)).toBe(true)
  }, 30_000)

  it.runIf(AS_NOBODY)('a log another user owns and lets this user\'s group write (0460) is recorded into, its mode as it was', async () => {
    const { base, log } = await readOnlyLog(0o460)
    await giveToNobody(base)
    await chown(log, 0, NOBODY)
    const { records, append } = await asNobody(base)
    expect(records).toEqual({ value: ['a'] })
    expect(append).toEqual({ value: 2 })
    // Not narrowed: only its owner may change its mode, and the owner shared it on purpose.
    expect(await modeOf(log)).toBe(0o460)
  }, 30_000)

  it.runIf(AS_NOBODY)('a log another user owns and this user may only read says whose it is, not to chmod it', async () => {
    const { base, log, bytes } = await readOnlyLog(0o644)
    await giveToNobody(base)
    const { append } = await asNobody(base)
    expect(append).toMatchObject({ code: 'CHECKPOINT_FAILED', message: expect.stringMatching(/belongs to .*uid 0.*ask its owner/) })
    expect(append.message).not.toMatch(/chmod/)
    expect((await readFile(log)).equals(bytes)).toBe(true)
  }, 30_000)

  it.runIf(process.getuid?.() === 0)('a log on a read-only mount says to mount it read-write, not to chmod it', async (context) => {
    const { base } = await readOnlyLog(0o600)
    const mounted = join(await tempRoot(), 'mount')
    await mkdir(mounted)
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'mode=0700', 'tmpfs', mounted], { stdio: 'ignore' })
    } catch {
      context.skip()
    }
    let store: JsonlCheckpointStore | undefined
    try {
      await cp(base, mounted, { recursive: true })
      execFileSync('mount', ['-o', 'remount,ro', mounted], { stdio: 'ignore' })
      store = new JsonlCheckpointStore({ folder: async (id) => join(mounted, id) })
      expect((await store.records('s1')).map((record) => record.path)).toEqual(['a'])
      const refused = store.append('s1', created('b', 'two', 't2'))
      await expect(refused).rejects.toMatchObject({ code: 'CHECKPOINT_FAILED', details: { file: join(mounted, 's1', LOG_FILE) } })
      await expect(refused).rejects.toThrow(/read-only file system.*mount it read-write/)
      await expect(refused).rejects.not.toThrow(/chmod/)
    } finally {
      // Its open log would keep the mount busy.
      await store?.close()
      execFileSync('umount', ['--lazy', mounted], { stdio: 'ignore' })
      await rm(mounted, { recursive: true, force: true })
    }
  })
})

/** Hands `base`, the session folder and its contents (the log excepted) to nobody, who then may write them. */
async function giveToNobody(base: string): Promise<void> {
  for (const path of [base, join(base, 's1'), join(base, 's1', BLOB_FOLDER)]) await chown(path, NOBODY, NOBODY)
  for (const name of await readdir(join(base, 's1', BLOB_FOLDER))) await chown(join(base, 's1', BLOB_FOLDER, name), NOBODY, NOBODY)
}

/** What the child (see its fixture) gave, run on `base` as root with every capability dropped (it can still read this repository). */
async function withoutPrivileges(base: string): Promise<{ records: { value?: unknown; code?: string; message?: string }; append: { value?: unknown; code?: string; message?: string } }> {
  const child = spawnSync('setpriv', ['--inh-caps=-all', '--bounding-set=-all', process.execPath, '--conditions=@rein/source', '--import', 'tsx', CHILD, base], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
  expect(child.status).toBe(0)
  return JSON.parse(child.stdout)
}

/** What the child (see its fixture) gave, run as nobody on `base`. */
async function asNobody(base: string): Promise<{ records: { value?: unknown; code?: string; message?: string }; append: { value?: unknown; code?: string; message?: string } }> {
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', CHILD, base], { uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0)
  return JSON.parse(out)
}
