/**
 * Writes text to a spill file as it comes, waiting for the disk when the file's buffer is full, so
 * memory stays bounded however much arrives. Every failure ends in a `SpillSaved` that says why.
 */

import type { Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import type { OpenSpill, SpillSaved } from '@rein/tools'

export class SpillSink {
  private constructor(private stream: Writable | undefined, private saved: SpillSaved) {
    // Without a listener a write error would crash the process; with it the preview says what failed.
    stream?.on('error', (error) => this.fail(error))
  }

  /** Opens `label` through `open`; a sink that writes nothing (and says why) when it cannot. */
  static async open(open: OpenSpill | undefined, label: string): Promise<SpillSink> {
    if (!open) return new SpillSink(undefined, { error: 'no spill folder: the call ran outside a session' })
    try {
      const file = await open(label)
      return new SpillSink(file.stream, { path: file.path })
    } catch (error) {
      return new SpillSink(undefined, { error: `the spill file could not be opened: ${(error as Error).message}` })
    }
  }

  /** The file's path while nothing has failed. */
  get path(): string | undefined {
    return 'path' in this.saved ? this.saved.path : undefined
  }

  /** Appends `text`; the promise, when there is one, settles once the file can take more. */
  write(text: string): void | Promise<void> {
    const stream = this.stream
    if (!stream || stream.destroyed || text === '') return
    if (stream.write(text)) return
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

  /** Ends the file; resolves to where all of it is, or why it is not. */
  async close(): Promise<SpillSaved> {
    const stream = this.stream
    if (stream) {
      stream.end()
      // A failed write already said so through 'error' (see `fail`); here it only ends the wait.
      await finished(stream).catch(() => undefined)
    }
    return this.saved
  }

  private fail(error: Error) {
    this.saved = { error: `writing ${this.path ?? 'the spill file'} failed: ${error.message}` }
    this.stream?.destroy()
    this.stream = undefined
  }
}
