/**
 * The two pipes as one text: each made plain (see terminal-text.ts: decoded as UTF-8, a character
 * split between chunks kept whole, escape sequences dropped, control characters shown, binary
 * summarized), stderr lines marked, and a line cut off by the other pipe ended where it was cut,
 * so every line belongs to one pipe.
 */

import type { ShellStream } from './shell.ts'
import { TerminalText } from './terminal-text.ts'

/** Put at the start of every line the command wrote to stderr. */
const STDERR_MARK = '[stderr] '

export class StreamFormatter {
  private readonly pipes = { stdout: new TerminalText(), stderr: new TerminalText() }
  private atLineStart = true
  private openStream: ShellStream | undefined

  /** The text to append for one chunk (possibly empty: half a character or sequence waits for its rest). */
  write(chunk: Uint8Array, stream: ShellStream): string {
    return this.format(this.pipes[stream].write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)), stream)
  }

  /** The lines the pipes hold while they are being redrawn (stderr's marked), one per pipe; '' when none. */
  pending(): string {
    const out = this.pipes.stdout.pending()
    const err = this.pipes.stderr.pending()
    if (err === '') return out
    return `${out === '' ? '' : `${out}\n`}${STDERR_MARK}${err}`
  }

  /** What the pipes still hold once both are closed (an incomplete character becomes U+FFFD, a binary end its note). */
  end(): string {
    return this.format(this.pipes.stdout.end(), 'stdout') + this.format(this.pipes.stderr.end(), 'stderr')
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
