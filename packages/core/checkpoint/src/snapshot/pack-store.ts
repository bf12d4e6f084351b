/**
 * The content store snapshots share: contents by sha256, appended to pack files under one folder
 * (`$REIN_HOME/snapshots`), one `.idx` line per content. Packs, not a file per content: a
 * workspace of 100 000 small files is then a few sequential writes, not 100 000 inodes. Each
 * process appends to its own pack, reads every pack, and keeps the folder under a size cap by
 * dropping its oldest packs. Nothing here is fsynced: a snapshot only has to outlive the command it
 * surrounds, and what rewind needs is copied into the session's durable checkpoint store.
 */

import { randomUUID } from 'node:crypto'
import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '@rein/base'
import { contentHash, isContentHash } from '../hash.ts'

/** How big the store may grow and when a pack is full. */
export interface PackStoreLimits {
  /** The folder's cap in bytes: past it, whole packs go, oldest first. */
  maxBytes: number
  /** A pack that reaches this size is closed and a new one started. */
  packBytes: number
}

interface Location {
  readonly pack: string
  readonly offset: number
  readonly length: number
}

interface OpenPack {
  readonly name: string
  readonly fd: number
  readonly indexFd: number
  size: number
  /** Bytes of whole lines in the index. */
  indexSize: number
}

/** What `dropOverCap` removed, for the log. */
export interface DroppedPacks {
  readonly packs: number
  readonly bytes: number
}

/** Why a stored content could not be read back. */
export type ContentMiss = 'gone' | 'damaged' | 'unreadable'

/** Contents by hash in packs (see the module comment). Synchronous: the walk that feeds it is. */
export class PackStore {
  private readonly _where = new Map<string, Location>()
  private _current: OpenPack | undefined
  private _loaded = false
  private _generation = 0

  /** `onDrop`: told what the cap removed, so the owner can say so. */
  constructor(private readonly folder: string, private readonly limits: PackStoreLimits, private readonly onDrop?: (dropped: DroppedPacks) => void) {}

  /** Moves on whenever contents are dropped: a caller that checked `has` before need only check again after it moved. */
  get generation(): number {
    return this._generation
  }

  /** Whether the content with this hash is stored (as far as this process knows). */
  has(hash: string): boolean {
    this.load()
    return this._where.has(hash)
  }

  /** Stores `content` under `hash` unless it is there already. */
  put(hash: string, content: Uint8Array): void {
    if (this.has(hash)) return
    const pack = this.writable()
    const offset = pack.size
    const line = Buffer.from(`${hash} ${offset} ${content.length}\n`)
    try {
      writeAll(pack.fd, content)
      pack.size += content.length
      // The index line comes after the content: a line always names bytes that were written.
      writeAll(pack.indexFd, line)
      pack.indexSize += line.length
    } catch (error) {
      // A part-written content or line would shift what comes after it: the next put starts a new pack.
      this.abandon(pack, offset)
      throw error
    }
    this._where.set(hash, { pack: pack.name, offset, length: content.length })
    if (pack.size >= this.limits.packBytes) this.rotate()
  }

  /**
   * The content, checked against its hash; `'gone'` when no pack holds it (the cap dropped its pack,
   * or a person removed it), `'damaged'` when its bytes no longer match the hash, `'unreadable'`
   * when its pack is there but could not be opened.
   */
  get(hash: string): Uint8Array | ContentMiss {
    this.load()
    const where = this._where.get(hash)
    if (!where) return 'gone'
    let fd: number
    try {
      fd = openSync(join(this.folder, `${where.pack}.pack`), 'r')
    } catch (error) {
      // Only a pack that is not there is gone; one that cannot be opened now (EACCES, EMFILE) may be later.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return 'unreadable'
      this._where.delete(hash)
      this._generation++
      return 'gone'
    }
    try {
      const content = Buffer.alloc(where.length)
      let read = 0
      while (read < where.length) {
        const n = readSync(fd, content, read, where.length - read, where.offset + read)
        if (n <= 0) break
        read += n
      }
      if (read < where.length || contentHash(content) !== hash) return 'damaged'
      return content
    } finally {
      closeSync(fd)
    }
  }

  /** Removes the oldest packs (never the one being written) until the folder is under its cap. */
  dropOverCap(): DroppedPacks {
    this.load()
    const packs = this.packs().sort((a, b) => a.mtimeMs - b.mtimeMs)
    let total = packs.reduce((sum, pack) => sum + pack.size, 0)
    let dropped = 0
    let freed = 0
    for (const pack of packs) {
      if (total <= this.limits.maxBytes) break
      if (pack.name === this._current?.name) continue
      for (const ext of ['.pack', '.idx']) {
        try {
          unlinkSync(join(this.folder, pack.name + ext))
        } catch {
          // Another process dropped it first.
        }
      }
      for (const [hash, where] of this._where) if (where.pack === pack.name) this._where.delete(hash)
      this._generation++
      total -= pack.size
      freed += pack.size
      dropped++
    }
    return { packs: dropped, bytes: freed }
  }

  /** Closes the pack being written. */
  close(): void {
    const pack = this._current
    this._current = undefined
    if (!pack) return
    closeSync(pack.fd)
    closeSync(pack.indexFd)
  }

  /**
   * Closes `pack` after a failed put, cut back to its whole contents (`offset` bytes) and lines: on
   * a full disk the part written is room the next walk needs. A pack that holds nothing goes.
   */
  private abandon(pack: OpenPack, offset: number): void {
    try {
      ftruncateSync(pack.fd, offset)
      ftruncateSync(pack.indexFd, pack.indexSize)
    } catch {
      // Left as it is: an index line names only whole contents, and the size cap drops the pack in time.
    }
    this.close()
    if (offset > 0 || pack.indexSize > 0) return
    for (const ext of ['.pack', '.idx']) {
      try {
        unlinkSync(join(this.folder, pack.name + ext))
      } catch {
        // Gone already.
      }
    }
  }

  private load(): void {
    if (this._loaded) return
    mkdirSync(this.folder, { recursive: true, mode: PRIVATE_DIR_MODE })
    this._loaded = true
    for (const entry of readdirSync(this.folder)) {
      if (!entry.endsWith('.idx')) continue
      const pack = entry.slice(0, -'.idx'.length)
      let text: string
      try {
        text = readFileSync(join(this.folder, entry), 'utf8')
      } catch {
        continue
      }
      for (const line of text.split('\n')) {
        const [hash, offset, length] = line.split(' ')
        // A torn last line (a process killed while writing it) is ignored.
        if (hash === undefined || !isContentHash(hash) || offset === undefined || length === undefined) continue
        const location = { pack, offset: Number(offset), length: Number(length) }
        if (Number.isSafeInteger(location.offset) && Number.isSafeInteger(location.length)) this._where.set(hash, location)
      }
    }
  }

  private writable(): OpenPack {
    if (this._current) return this._current
    this.load()
    const name = `${Date.now()}-${process.pid}-${randomUUID().slice(0, 8)}`
    const fd = openSync(join(this.folder, `${name}.pack`), 'wx', PRIVATE_FILE_MODE)
    let indexFd: number
    try {
      indexFd = openSync(join(this.folder, `${name}.idx`), 'wx', PRIVATE_FILE_MODE)
    } catch (error) {
      // No pack without its index (a full disk may leave no room for one): it would only take room.
      closeSync(fd)
      try {
        unlinkSync(join(this.folder, `${name}.pack`))
      } catch {
        // Gone already.
      }
      throw error
    }
    this._current = { name, fd, indexFd, size: 0, indexSize: 0 }
    return this._current
  }

  private rotate(): void {
    this.close()
    const dropped = this.dropOverCap()
    if (dropped.packs > 0) this.onDrop?.(dropped)
  }

  private packs(): { name: string; size: number; mtimeMs: number }[] {
    const packs = []
    for (const entry of readdirSync(this.folder)) {
      if (!entry.endsWith('.pack')) continue
      try {
        const stats = statSync(join(this.folder, entry))
        packs.push({ name: entry.slice(0, -'.pack'.length), size: stats.size, mtimeMs: stats.mtimeMs })
      } catch {
        // Dropped by another process meanwhile.
      }
    }
    return packs
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0
  while (offset < bytes.length) {
    const n = writeSync(fd, bytes, offset, bytes.length - offset)
    if (n <= 0) throw new Error(`the write stopped after ${offset} of ${bytes.length} bytes`)
    offset += n
  }
}
