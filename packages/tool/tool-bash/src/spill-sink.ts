/**
 * Writes text to a spill file as it comes, waiting for the disk when the file's buffer is full, so
 * memory stays bounded however much arrives; past a byte cap it stops writing and only counts, so
 * disk use stays bounded too. Every failure ends in a `SpillSaved` that says why.
 */

import { rm } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import type { OpenSpill, SpillSaved } from '@rein/tools'
import { groupDigits } from '@rein/base'

export class SpillSink {
  /** Bytes written to the file. */
  private written = 0
  /** Bytes that came after the cap and were not written. */
  private unsaved = 0
  private capped = false
  private endsLine = true

  private constructor(private stream: Writable | undefined, private saved: SpillSaved, readonly cap: number) {
    // Without a listener a write error would crash the process; with it the preview says what failed.
    stream?.on('error', (error) => this.fail(error))
  }

  /** Opens `label` through `open`, writing at most `cap` bytes; a sink that writes nothing (and says why) when it cannot. */
  static async open(open: OpenSpill | undefined, label: string, cap = Infinity): Promise<SpillSink> {
    if (!open) return new SpillSink(undefined, { error: 'no spill folder: the call ran outside a session' }, cap)
    try {
      const file = await open(label)
      return new SpillSink(file.stream, { path: file.path }, cap)
    } catch (error) {
      return new SpillSink(undefined, { error: `the spill file could not be opened: ${(error as Error).message}` }, cap)
    }
  }

  /** The file's path while nothing has failed. */
  get path(): string | undefined {
    return 'path' in this.saved ? this.saved.path : undefined
  }

  /** Whether output came past the cap: the file no longer holds all of it. */
  get full(): boolean {
    return this.capped
  }

  /** Bytes (UTF-8) that arrived past the cap and are not in the file; 0 when it holds everything. */
  get unsavedBytes(): number {
    return this.unsaved
  }

  /** Appends `text` (what fits under the cap); the promise, when there is one, settles once the file can take more. */
  write(text: string): void | Promise<void> {
    if (text === '' || !this.stream) return
    if (this.capped) {
      this.unsaved += Buffer.byteLength(text)
      return
    }
    const bytes = Buffer.byteLength(text)
    if (this.written + bytes <= this.cap) return this.put(text, bytes)
    // The first bytes that fit, cut before a character that would not fit whole.
    const buffer = Buffer.from(text)
    const fit = characterStart(buffer, this.cap - this.written)
    this.capped = true
    this.unsaved = bytes - fit
    return fit === 0 ? undefined : this.put(buffer.subarray(0, fit), fit)
  }

  /** Ends the file, with a last line saying what the cap left out; resolves to where the output is, or why it is not. */
  async close(): Promise<SpillSaved> {
    const stream = this.stream
    if (stream) {
      if (this.capped && !stream.destroyed) stream.write(`${this.endsLine ? '' : '\n'}${capNote(this.cap, this.unsaved)}\n`)
      stream.end()
      // A failed write already said so through 'error' (see `fail`); here it only ends the wait.
      await finished(stream).catch(() => undefined)
    }
    return this.saved
  }

  /**
   * Ends the file and removes it: for output that never came (a background command that never
   * started), so no empty file is left for the model or a later process to find.
   */
  async discard(): Promise<void> {
    const path = this.path
    await this.close()
    if (path !== undefined) await rm(path, { force: true }).catch(() => undefined)
  }

  private put(chunk: string | Buffer, bytes: number): void | Promise<void> {
    const stream = this.stream
    if (!stream || stream.destroyed) return
    this.written += bytes
    this.endsLine = typeof chunk === 'string' ? chunk.endsWith('\n') : chunk[chunk.length - 1] === 0x0a
    if (stream.write(chunk)) return
    return new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done)
        stream.off('close', done)
        resolve()
      }
      stream.on('drain', done)
      stream.on('close', done)
    })
  }

  private fail(error: Error) {
    this.saved = { error: `writing ${this.path ?? 'the spill file'} failed: ${error.message}` }
    this.stream?.destroy()
    this.stream = undefined
  }
}

/** The line that ends a capped file, and the model's fact line about it. */
export function capNote(cap: number, unsavedBytes: number): string {
  return `[output file capped at ${formatBytes(cap)}; ${groupDigits(unsavedBytes)} more bytes were not saved]`
}

/** `64 MiB`, `4 KiB`, `1,500 bytes`: the largest binary unit that divides it. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3 && bytes % 1024 ** 3 === 0) return `${bytes / 1024 ** 3} GiB`
  if (bytes >= 1024 ** 2 && bytes % 1024 ** 2 === 0) return `${bytes / 1024 ** 2} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${groupDigits(bytes)} bytes`
}

/** The largest length ≤ `max` that does not end inside a UTF-8 character. */
function characterStart(buffer: Buffer, max: number): number {
  let end = Math.min(max, buffer.length)
  // A continuation byte (10xxxxxx) at `end` means the character holding it began before `end`.
  while (end > 0 && end < buffer.length && ((buffer[end] ?? 0) & 0xc0) === 0x80) end--
  return end
}
