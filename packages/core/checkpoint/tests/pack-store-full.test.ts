// The shared snapshot store on a full disk: a content it could not write whole leaves no bytes behind.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { contentHash } from '../src/index.ts'
import { PackStore } from '../src/snapshot/pack-store.ts'
import { tempRoot } from './harness.ts'

/** While set, a write of more than `room` bytes writes `room` of them, then the next fails with ENOSPC. */
const disk = vi.hoisted(() => ({ room: undefined as number | undefined }))

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>()
  const writeSync = (fd: number, buffer: Uint8Array, offset = 0, length = buffer.length - offset, position?: number | null) => {
    if (disk.room === undefined) return fs.writeSync(fd, buffer, offset, length, position)
    if (disk.room === 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
    const n = fs.writeSync(fd, buffer, offset, Math.min(length, disk.room), position)
    disk.room -= n
    return n
  }
  return { ...fs, default: { ...fs, writeSync }, writeSync }
})

const bytes = (text: string) => Buffer.from(text)

describe('PackStore on a full disk', () => {
  it('leaves no part-written pack or index behind when a content cannot be written whole', async () => {
    const folder = join(await tempRoot(), 'snapshots')
    const store = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    disk.room = 3
    try {
      expect(() => store.put(contentHash(bytes('too big')), bytes('too big'))).toThrow(/ENOSPC/)
    } finally {
      disk.room = undefined
    }
    // Nothing it could name was written: no pack at all.
    expect(await readdir(folder)).toEqual([])
  })

  it('cuts a pack back to its whole contents when the next one cannot be written whole, and reads those still', async () => {
    const folder = join(await tempRoot(), 'snapshots')
    const store = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    const kept = contentHash(bytes('kept'))
    store.put(kept, bytes('kept'))
    const [pack] = (await readdir(folder)).filter((name) => name.endsWith('.pack'))
    const [index] = (await readdir(folder)).filter((name) => name.endsWith('.idx'))
    const indexBytes = (await stat(join(folder, index ?? ''))).size
    // The content whole, then half its index line.
    disk.room = 'lost'.length + 10
    try {
      expect(() => store.put(contentHash(bytes('lost')), bytes('lost'))).toThrow(/ENOSPC/)
    } finally {
      disk.room = undefined
    }
    expect(await readFile(join(folder, pack ?? ''), 'utf8')).toBe('kept')
    expect((await stat(join(folder, index ?? ''))).size).toBe(indexBytes)
    const later = new PackStore(folder, { maxBytes: 1 << 20, packBytes: 1 << 20 })
    expect(Buffer.from(later.get(kept) ?? []).toString()).toBe('kept')
    expect(later.has(contentHash(bytes('lost')))).toBe(false)
  })
})
