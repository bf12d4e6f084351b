/**
 * Streams a file once: hashes every byte, counts its lines and keeps only the requested window,
 * each line cut to a length cap, so memory stays bounded whatever the file's size or line length.
 */

import { createHash } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'
import { cutHead } from '@rein/base'

/** What one pass over a file found. */
export interface LineWindow {
  binary: boolean
  /** The window's lines, without line breaks, each at most `lineChars` long. */
  lines: string[]
  startLine: number
  totalLines: number
  /** Numbers of the window's lines that were longer than `lineChars` and cut. */
  cut: number[]
  /** Some bytes of the window are not UTF-8 (shown as U+FFFD). */
  invalidUtf8: boolean
  /** sha256 of every byte (of the first chunk only, for a binary file), hex. */
  hash: string
  bytes: number
}

export interface WindowRequest {
  /** 1-based first line. */
  offset: number
  limit: number
  lineChars: number
  /** Stop the window before the rendered lines (`<n>\t<text>\n`) pass this many characters; at least one line is kept. */
  chars: number
  signal?: AbortSignal
}

const CHUNK = 64 * 1024
/** Bytes looked at for a NUL, as git and ripgrep do, to call a file binary. */
export const BINARY_SNIFF_BYTES = 8000
/** Shown after a cut line; counted against the window's characters. */
export const CUT_MARK = ' … [line cut]'
// ignoreBOM: keep U+FEFF in the text; only a BOM at the very start of the file is dropped.
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const lenient = new TextDecoder('utf-8', { ignoreBOM: true })

export async function readLineWindow(handle: FileHandle, request: WindowRequest): Promise<LineWindow> {
  const hash = createHash('sha256')
  const buffer = Buffer.allocUnsafe(CHUNK)
  const window = new WindowBuilder(request)
  let bytes = 0
  let binary = false
  let line = 1
  let lineOpen = false
  for (;;) {
    request.signal?.throwIfAborted()
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, null)
    if (bytesRead === 0) break
    const chunk = buffer.subarray(0, bytesRead)
    hash.update(chunk)
    if (bytes < BINARY_SNIFF_BYTES && chunk.subarray(0, BINARY_SNIFF_BYTES - bytes).includes(0)) binary = true
    bytes += bytesRead
    // A binary file is not shown (nor ever edited), so the rest of it need not be read.
    if (binary) break
    let position = 0
    while (position < chunk.length) {
      const newline = chunk.indexOf(10, position)
      const end = newline === -1 ? chunk.length : newline
      if (end > position) lineOpen = true
      window.take(line, chunk, position, end)
      if (newline === -1) break
      window.end(line)
      line++
      lineOpen = false
      position = newline + 1
    }
  }
  if (lineOpen) window.end(line)
  const totalLines = binary ? 0 : lineOpen ? line : line - 1
  return { binary, totalLines, hash: hash.digest('hex'), bytes, ...window.result() }
}

/** Collects the bytes of the window's lines, decodes each at its end, and applies the caps. */
class WindowBuilder {
  private readonly lines: string[] = []
  private parts: Buffer[] = []
  private kept = 0
  private chars = 0
  private full = false
  private readonly cut: number[] = []
  private invalidUtf8 = false
  private readonly maxBytes: number

  constructor(private readonly request: WindowRequest) {
    // Enough bytes for `lineChars` characters of any UTF-8 plus one, so a cut is always noticed.
    this.maxBytes = request.lineChars * 4 + 4
  }

  private wants(line: number) {
    return !this.full && line >= this.request.offset && line < this.request.offset + this.request.limit
  }

  take(line: number, chunk: Buffer, start: number, end: number) {
    if (!this.wants(line) || this.kept >= this.maxBytes) return
    const slice = chunk.subarray(start, Math.min(end, start + this.maxBytes - this.kept))
    this.parts.push(Buffer.from(slice))
    this.kept += slice.length
  }

  end(line: number) {
    if (!this.wants(line)) return
    const raw = Buffer.concat(this.parts)
    const overflowed = this.kept >= this.maxBytes
    this.parts = []
    this.kept = 0
    let text = decode(raw, overflowed, () => { this.invalidUtf8 = true })
    if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1)
    if (text.endsWith('\r')) text = text.slice(0, -1)
    const cut = overflowed || text.length > this.request.lineChars
    if (cut) text = cutHead(text, this.request.lineChars)
    const cost = String(line).length + 2 + text.length + (cut ? CUT_MARK.length : 0)
    if (this.lines.length > 0 && this.chars + cost > this.request.chars) {
      this.full = true
      return
    }
    this.chars += cost
    this.lines.push(text)
    if (cut) this.cut.push(line)
  }

  result() {
    return { lines: this.lines, startLine: this.request.offset, cut: this.cut, invalidUtf8: this.invalidUtf8 }
  }
}

/** UTF-8 text of a line; a line cut mid-character is not invalid, so only a whole line is checked strictly. */
function decode(raw: Buffer, cut: boolean, onInvalid: () => void): string {
  if (cut) return lenient.decode(raw)
  try {
    return fatal.decode(raw)
  } catch {
    onInvalid()
    return lenient.decode(raw)
  }
}
