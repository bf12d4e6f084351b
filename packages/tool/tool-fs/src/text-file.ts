/** Loads a whole existing file for `write`, `edit` and `multi_edit`: size-capped, UTF-8 only. */

import { createHash } from 'node:crypto'
import type { Stats } from 'node:fs'
import { fromSystemError, fsError } from './errors.ts'
import { BINARY_SNIFF_BYTES } from './line-window.ts'
import { openRegularFile } from './open-file.ts'
import type { FileSnapshot } from './file-reads.ts'
import type { Resolved } from './workspace.ts'

/** An existing text file as loaded. */
export interface TextFile {
  /** The content, without a leading byte-order mark. */
  text: string
  bom: boolean
  snapshot: FileSnapshot
  stat: Stats
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export async function loadTextFile(resolved: Resolved, allowed: string, maxBytes: number): Promise<TextFile> {
  const { handle, stat } = await openRegularFile(resolved, allowed)
  let bytes: Buffer
  try {
    if (stat.size > maxBytes) throw tooLarge(resolved.display, stat.size, maxBytes)
    bytes = await handle.readFile()
  } catch (error) {
    throw fromSystemError(error, 'read', resolved.display)
  } finally {
    await handle.close()
  }
  if (bytes.length > maxBytes) throw tooLarge(resolved.display, bytes.length, maxBytes)
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    throw fsError('NOT_TEXT', `${resolved.display} is a binary file; write and edit change text files only`, { path: resolved.display })
  }
  let text: string
  try {
    text = strict.decode(bytes)
  } catch (error) {
    throw fsError('NOT_TEXT', `${resolved.display} is not valid UTF-8; editing it here could change bytes you cannot see, so change it another way`, { path: resolved.display }, error)
  }
  const bom = text.startsWith('\uFEFF')
  const hash = createHash('sha256').update(bytes).digest('hex')
  return { text: bom ? text.slice(1) : text, bom, snapshot: { size: bytes.length, mtimeMs: stat.mtimeMs, hash }, stat }
}

export function tooLarge(display: string, size: number, maxBytes: number) {
  return fsError('FILE_TOO_LARGE', `${display} is ${formatBytes(size)}; write and edit handle files up to ${formatBytes(maxBytes)}, so change this one another way (a command such as sed)`, { path: display, size, maxBytes })
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}
