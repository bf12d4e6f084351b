/**
 * The two pipes as one text: decoded as UTF-8 (a character split between chunks is kept whole),
 * stderr lines marked, and a line cut off by the other pipe ended where it was cut, so every line
 * belongs to one pipe.
 */

import { StringDecoder } from 'node:string_decoder'
import type { ShellStream } from './shell.ts'

/** Put at the start of every line the command wrote to stderr. */
const STDERR_MARK = '[stderr] '

export class StreamFormatter {
  private readonly decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') }
  private atLineStart = true
  private openStream: ShellStream | undefined

  /** The text to append for one chunk (possibly empty: half a character waits for its rest). */
  write(chunk: Uint8Array, stream: ShellStream): string {
    return this.format(this.decoders[stream].write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)), stream)
  }

  /** What the decoders still hold once both pipes are closed (an incomplete character becomes U+FFFD). */
  end(): string {
    return this.format(this.decoders.stdout.end(), 'stdout') + this.format(this.decoders.stderr.end(), 'stderr')
  }

  private format(text: string, stream: ShellStream): string {
    if (text === '') return ''
    let out = ''
    if (!this.atLineStart && this.openStream !== stream) {
      out = '\n'
      this.atLineStart = true
    }
    if (stream === 'stderr') out += (this.atLineStart ? STDERR_MARK : '') + text.replace(/\n(?=[\s\S])/g, `\n${STDERR_MARK}`)
    else out += text
    this.atLineStart = text.endsWith('\n')
    this.openStream = this.atLineStart ? undefined : stream
    return out
  }
}
