// The shared snapshot store: contents by hash in packs, under a size cap, never trusting damaged bytes.
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contentHash } from '../src/index.ts'
import { PackStore } from '../src/snapshot/pack-store.ts'
import { tempRoot } from './harness.ts'

const bytes = (text: string) => Buffer.from(text)

describe('PackStore', () => {
  it('stores a content once and reads it back, from this process and from a later one', async () => {
    const folder = join(await tempRoot(), 'snapshots')
    const store = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    const hash = contentHash(bytes('hello'))
    store.put(hash, bytes('hello'))
    store.put(hash, bytes('hello'))
    expect(Buffer.from(store.get(hash)).toString()).toBe('hello')
    store.close()
    const packs = (await readdir(folder)).filter((name) => name.endsWith('.pack'))
    expect(packs).toHaveLength(1)
    expect((await readFile(join(folder, packs[0] ?? ''))).length).toBe(5)
    const later = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    expect(later.has(hash)).toBe(true)
    expect(Buffer.from(later.get(hash)).toString()).toBe('hello')
  })

  it('ignores a torn index line and says damaged bytes are damaged', async () => {
    const folder = join(await tempRoot(), 'snapshots')
    const store = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    const hash = contentHash(bytes('intact'))
    store.put(hash, bytes('intact'))
    store.close()
    const [index] = (await readdir(folder)).filter((name) => name.endsWith('.idx'))
    const [pack] = (await readdir(folder)).filter((name) => name.endsWith('.pack'))
    await appendFile(join(folder, index ?? ''), `${'a'.repeat(64)} 0`)
    await writeFile(join(folder, pack ?? ''), 'broken')
    const later = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    expect(later.has('a'.repeat(64))).toBe(false)
    expect(later.get(hash)).toBe('damaged')
  })

  it('drops its oldest packs past the cap, and says the dropped contents are gone', async () => {
    const folder = join(await tempRoot(), 'snapshots')
    const drops: number[] = []
    const store = new PackStore(folder, { maxBytes: 250, packBytes: 100 }, (dropped) => drops.push(dropped.packs))
    const hashes = Array.from({ length: 5 }, (_, index) => {
      const content = bytes(String(index).repeat(100))
      const hash = contentHash(content)
      store.put(hash, content)
      return hash
    })
    const packs = (await readdir(folder)).filter((name) => name.endsWith('.pack'))
    expect(packs.length).toBeLessThanOrEqual(3)
    expect(store.has(hashes[0] ?? '')).toBe(false)
    expect(store.get(hashes[0] ?? '')).toBe('gone')
    expect(store.get(hashes[4] ?? '')).toBeInstanceOf(Uint8Array)
    expect(drops.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0)
  })
})
