import { spawn } from 'node:child_process'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { normalizeContent } from '@rein/memory'
import { describe, expect, it } from 'vitest'
import { entry, openStore, tempRoot } from './temp-root.ts'

const WRITER = new URL('./fixtures/write-entries.ts', import.meta.url).pathname
const HOLD_LOCK = new URL('./fixtures/hold-lock.ts', import.meta.url).pathname
const SERVICE_WRITES = new URL('./fixtures/service-writes.ts', import.meta.url).pathname
const PER_WRITER = 200

/** A fixture process spawned with `args`, resolved once it has printed "ready"; `go` lets it start. */
async function child(script: string, args: readonly string[]) {
  const spawned = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  let errors = ''
  const waiting: { text: string; resolve: () => void }[] = []
  spawned.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString() })
  spawned.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
    for (const wait of waiting.filter(({ text }) => output.includes(text))) wait.resolve()
  })
  const exited = new Promise<{ code: number | null; output: string; errors: string }>((resolve) => spawned.once('exit', (code) => resolve({ code, output, errors })))
  /** Resolves once the process has printed `text`; rejects if it exits first. */
  const printed = (text: string) => new Promise<void>((resolve, reject) => {
    if (output.includes(text)) return resolve()
    waiting.push({ text, resolve })
    void exited.then(() => reject(new Error(`${script} exited before it printed ${text}: ${errors}`)))
  })
  await printed('ready')
  return { go: () => spawned.stdin.write('go\n'), printed, exited }
}

/** A write-entries.ts process inserting `count` entries `<prefix>-<n>` into `file`. */
function writer(file: string, prefix: string, count = PER_WRITER, busyTimeoutMs?: number) {
  return child(WRITER, [file, prefix, String(count), ...(busyTimeoutMs === undefined ? [] : [String(busyTimeoutMs)])])
}

/** The ids in `file` in the order they were committed (rowid order), read by a connection of its own. */
function committedOrder(file: string): string[] {
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare('SELECT id FROM memory_entries ORDER BY seq').all() as { id: string }[]).map((row) => row.id)
  } finally {
    db.close()
  }
}

describe('two processes writing at once', () => {
  it('keeps all 400 entries of two processes inserting 200 each into one file, with no SQLITE_BUSY', async () => {
    const file = join(await tempRoot(), 'memory.db')
    const writers = await Promise.all([writer(file, 'a'), writer(file, 'b')])
    for (const child of writers) child.go()
    const results = await Promise.all(writers.map((child) => child.exited))
    for (const result of results) {
      expect(result.errors).not.toMatch(/SQLITE_BUSY|MEMORY_STORE/)
      expect(result).toMatchObject({ code: 0, output: expect.stringContaining('done') })
    }
    const store = await openStore({ file })
    const ids = new Set((await store.all()).map((item) => item.id))
    expect(ids.size).toBe(2 * PER_WRITER)
    for (let index = 0; index < PER_WRITER; index++) expect(ids.has(`a-${index}`) && ids.has(`b-${index}`)).toBe(true)
    expect(await store.recall({ scopes: ['user'], query: 'wrote', limit: 1000, now: Date.now() })).toHaveLength(2 * PER_WRITER)
  }, 60_000)
})

describe('another process holding the write lock', () => {
  it('makes a write wait, then fail with MEMORY_STORE_LOCKED naming the file; reads go on; the write works once it lets go', async () => {
    const store = await openStore({ busyTimeoutMs: 200 })
    await store.insert(entry({ id: 'before' }))
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLD_LOCK, store.file], { stdio: ['pipe', 'pipe', 'inherit'] })
    const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve))
    await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('locked')) resolve() }))
    const failure = store.insert(entry({ id: 'during' }))
    await expect(failure).rejects.toMatchObject({ code: 'MEMORY_STORE_LOCKED', details: { file: store.file } })
    await expect(failure).rejects.toThrow(store.file)
    // WAL: readers are not blocked by a writer.
    expect((await store.recall({ scopes: ['user'], limit: 5, now: 1 })).map((item) => item.id)).toEqual(['before'])
    holder.stdin.end()
    expect(await exited).toBe(0)
    await store.insert(entry({ id: 'after' }))
    expect((await store.all()).map((item) => item.id)).toEqual(['before', 'after'])
  }, 30_000)
})

describe('another process writing while an atomically body is open', () => {
  it('cannot slip in between the body\'s steps: it waits for the commit, or fails MEMORY_STORE_LOCKED when that takes longer than its busy timeout', async () => {
    const store = await openStore()
    const [patient, impatient] = await Promise.all([writer(store.file, 'patient', 1), writer(store.file, 'impatient', 1, 300)])
    const inside = await store.atomically(async () => {
      await store.insert(entry({ id: 'first' }))
      patient.go()
      await patient.printed('trying')
      impatient.go()
      const result = await impatient.exited
      await store.insert(entry({ id: 'second' }))
      return result
    })
    expect(inside).toMatchObject({ code: 1, output: expect.stringContaining('failed MEMORY_STORE_LOCKED') })
    expect(await patient.exited).toMatchObject({ code: 0, output: expect.stringContaining('done') })
    expect(committedOrder(store.file)).toEqual(['first', 'second', 'patient-0'])
  }, 30_000)

  it('an atomically body waits for another process\'s write lock, then fails MEMORY_STORE_LOCKED naming the file without running', async () => {
    const store = await openStore({ busyTimeoutMs: 200 })
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLD_LOCK, store.file], { stdio: ['pipe', 'pipe', 'inherit'] })
    const exited = new Promise<number | null>((resolve) => holder.once('exit', resolve))
    await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('locked')) resolve() }))
    let ran = false
    const failure = store.atomically(async () => { ran = true })
    await expect(failure).rejects.toMatchObject({ code: 'MEMORY_STORE_LOCKED', details: { file: store.file } })
    await expect(failure).rejects.toThrow(store.file)
    expect(ran).toBe(false)
    holder.stdin.end()
    expect(await exited).toBe(0)
    expect(await store.atomically(async () => 'ran')).toBe('ran')
  }, 30_000)
})

describe('two processes using ctx.memory on one file at once', () => {
  const WRITES = 100

  it('two processes writing the same memory at once keep one entry, and superseding one entry at once retires it once', async () => {
    const file = join(await tempRoot(), 'memory.db')
    const seed = await openStore({ file })
    await seed.insert(entry({ id: 'shared', content: 'Nobody corrected it yet', createdAt: Date.now(), updatedAt: Date.now() }))
    await seed.close()
    const writers = await Promise.all(['a', 'b'].map((name) => child(SERVICE_WRITES, [file, name, 'shared', String(WRITES)])))
    for (const writer of writers) writer.go()
    const results = await Promise.all(writers.map((writer) => writer.exited))
    const reports = results.map((result) => {
      expect(result).toMatchObject({ code: 0, errors: '' })
      return JSON.parse(result.output.split('\n').find((line) => line.startsWith('{')) ?? 'null') as { supersede: string; added: number; refreshed: number; other: string[] }
    })
    expect(reports.flatMap((report) => report.other)).toEqual([])
    expect(reports.reduce((sum, report) => sum + report.added, 0)).toBe(1)
    expect(reports.reduce((sum, report) => sum + report.refreshed, 0)).toBe(2 * WRITES - 1)
    expect(reports.map((report) => report.supersede).sort()).toEqual(['MEMORY_RETIRED', 'added'])

    const store = await openStore({ file })
    const all = await store.all()
    const same = all.filter((item) => normalizeContent(item.content) === normalizeContent('Prefers pnpm over npm.'))
    expect(same).toHaveLength(1)
    const corrections = all.filter((item) => item.supersedes === 'shared')
    expect(corrections).toHaveLength(1)
    expect(await store.get('shared')).toMatchObject({ retiredBy: corrections[0]!.id })
    expect(all).toHaveLength(3)
  }, 60_000)
})
