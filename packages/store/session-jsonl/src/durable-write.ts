/**
 * Durable writes: appending a batch with fsync and rollback, and publishing a new file atomically
 * (temp file, fsync, no-overwrite `link`, directory fsync).
 */

import { randomUUID } from 'node:crypto'
import { link, open, unlink, type FileHandle } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { ReinError, openPrivateFile } from '@rein/base'
import { errorCode } from './fs-errors.ts'

/** The part of a `FileHandle` an append needs. */
export interface AppendTarget {
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>
  sync(): Promise<void>
  truncate(length: number): Promise<void>
}

/**
 * Writes `data` at `position` (the file's length) and fsyncs. On failure it truncates the file back
 * to `position`, so no partial line remains, and rethrows the original error. A failed rollback is
 * swallowed: the caller must truncate to `position` before its next write.
 */
export async function appendDurably(target: AppendTarget, position: number, data: Uint8Array): Promise<void> {
  try {
    await writeAll(target, data, position)
    await target.sync()
  } catch (error) {
    try {
      await target.truncate(position)
      await target.sync()
    } catch {
      // Reported through the original error; the caller re-truncates before writing again.
    }
    throw error
  }
}

/**
 * Creates `file` holding exactly `content`, or fails with `SESSION_EXISTS` if it exists: no reader
 * ever sees it partly written, and an existing file is never overwritten. Returns a handle open
 * for writing on the new file.
 */
export async function publishFile(file: string, content: Uint8Array): Promise<FileHandle> {
  const folder = join(file, '..')
  const temp = join(folder, `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`)
  const handle = await openPrivateFile(temp, 'wx')
  let linked = false
  try {
    await writeAll(handle, content, 0)
    await handle.sync()
    try {
      await link(temp, file)
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error
      throw new ReinError('SESSION_EXISTS', `${file} already exists and was left untouched; create the session under another id, or open() the existing one`, { cause: error, details: { file } })
    }
    linked = true
    await syncFolder(folder)
    return handle
  } catch (error) {
    if (linked) await unlink(file).catch(() => undefined)
    await handle.close()
    throw error
  } finally {
    await unlink(temp).catch(() => undefined)
  }
}

async function writeAll(target: AppendTarget, data: Uint8Array, position: number): Promise<void> {
  let offset = 0
  while (offset < data.length) {
    const { bytesWritten } = await target.write(data, offset, data.length - offset, position + offset)
    if (bytesWritten <= 0) throw new Error(`the write stopped after ${offset} of ${data.length} bytes`)
    offset += bytesWritten
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
