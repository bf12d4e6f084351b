/**
 * A foreground command's output as the model reads it: kept whole while short; once long, written
 * to a spill file as it arrives (waiting for the disk, so memory stays bounded) while only a head
 * and a tail stay here, for the preview.
 */

import { SpillKeeper, type OpenSpill, type SpillExcerpt, type SpillLimits, type SpillSaved } from '@rein/tools'
import type { ShellStream } from './shell.ts'
import { SpillSink } from './spill-sink.ts'
import { StreamFormatter } from './stream-format.ts'

/**
 * All of a short output, or the preview parts of a long one and where it went: the file holds its
 * first `fileCap` bytes, and `unsavedBytes` more did not fit (0: the file holds all of it).
 */
export type CollectedOutput =
  | { kind: 'whole'; text: string }
  | { kind: 'excerpt'; excerpt: SpillExcerpt; saved: SpillSaved; fileCap: number; unsavedBytes: number }

export class OutputCollector {
  private readonly keeper: SpillKeeper
  private readonly formatter = new StreamFormatter()
  /** The whole text while it is short; then the spill file it goes to (a promise while it opens). */
  private state: { kind: 'short'; buffered: string[] } | { kind: 'long'; sink: SpillSink | Promise<SpillSink> } = { kind: 'short', buffered: [] }

  /** `fileCap`: the most bytes the spill file takes (default: no limit). */
  constructor(limits: SpillLimits, private readonly openSpill: OpenSpill | undefined, private readonly fileCap = Infinity) {
    this.keeper = new SpillKeeper(limits)
  }

  /** Takes one chunk; a returned promise asks the producer to wait (the spill file is opening or full). */
  write(chunk: Uint8Array, stream: ShellStream): void | Promise<void> {
    return this.add(this.formatter.write(chunk, stream))
  }

  /** Flushes the decoders, closes the spill file and says what the model gets. */
  async finish(): Promise<CollectedOutput> {
    await this.add(this.formatter.end())
    const state = this.state
    if (state.kind === 'short') return { kind: 'whole', text: state.buffered.join('') }
    const sink = await state.sink
    const saved = await sink.close()
    return { kind: 'excerpt', excerpt: this.keeper.excerpt(), saved, fileCap: this.fileCap, unsavedBytes: sink.unsavedBytes }
  }

  private add(text: string): void | Promise<void> {
    if (text === '') return
    this.keeper.append(text)
    const state = this.state
    if (state.kind === 'long') {
      const sink = state.sink
      // A producer that did not wait for the file to open still gets its chunks written in order.
      return sink instanceof SpillSink ? sink.write(text) : sink.then((opened) => opened.write(text))
    }
    state.buffered.push(text)
    if (!this.keeper.long) return
    // Long from here on: the file gets everything so far, then each chunk as it comes.
    const whole = state.buffered.join('')
    const opening = SpillSink.open(this.openSpill, 'output', this.fileCap).then((sink) => {
      this.state = { kind: 'long', sink }
      return sink
    })
    this.state = { kind: 'long', sink: opening }
    return opening.then((sink) => sink.write(whole))
  }
}
