import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { entry, openStore, tempRoot } from './temp-root.ts'

const WRITER = new URL('./fixtures/write-entries.ts', import.meta.url).pathname
const HOLD_LOCK = new URL('./fixtures/hold-lock.ts', import.meta.url).pathname
const PER_WRITER = 200

/** A writer process on `file`, resolved once it has opened the store. */
async function writer(file: string, prefix: string) {
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', WRITER, file, prefix, String(PER_WRITER)], { stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => { errors += chunk.toString() })
  const exited = new Promise<{ code: number | null; output: string; errors: string }>((resolve) => child.once('exit', (code) => resolve({ code, output, errors })))
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('ready')) resolve()
    })
    child.once('exit', () => reject(new Error(`writer ${prefix} exited before it was ready: ${errors}`)))
  })
  return { go: () => child.stdin.write('go\n'), exited }
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
