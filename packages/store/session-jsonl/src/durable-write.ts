/**
 * Durable writes: appending a batch with fsync and rollback, and publishing a new file atomically
 * (temp file, fsync, no-overwrite `link`, directory fsync). A file is synced with fdatasync: its
 * bytes and length, which is all a reader needs, without its times.
 *
 * Writes are synchronous: a turn waits for its log to be durable before it sends a request or runs a
 * tool, and a thread-pool round trip costs several times the CPU of a small write. The fsync is
 * synchronous too unless `offLoop` is asked for (the store does when more than one session is open,
 * so one session's fsync does not hold up another's stream; see the README's Limitations).
 */

import { randomUUID } from 'node:crypto'
import { closeSync, fdatasync, fdatasyncSync, fsync, fsyncSync, ftruncateSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { PRIVATE_FILE_MODE, ReinError } from '@rein/base'
import { errorCode } from './fs-errors.ts'

const fsyncOffLoop = promisify(fsync)
const fdatasyncOffLoop = promisify(fdatasync)

/** What an append needs of an open file. */
export interface AppendTarget {
  write(buffer: Uint8Array, offset: number, length: number, position: number): number
  sync(): void | Promise<void>
  truncate(length: number): void
}

/**
 * An `AppendTarget` on a file's descriptor; `offLoop` syncs on the thread pool instead of the event
 * loop. A file's bytes and length are synced with fdatasync, which skips the times nothing reads.
 */
export function fileTarget(fd: number, offLoop = false): AppendTarget {
  return {
    write: (buffer, offset, length, position) => writeSync(fd, buffer, offset, length, position),
    sync: offLoop ? () => fdatasyncOffLoop(fd) : () => fdatasyncSync(fd),
    truncate: (length) => ftruncateSync(fd, length),
  }
}

/**
 * Writes `data` at `position` (the file's length) and, with `sync` (the default), fsyncs. On failure
 * it truncates the file back to `position`, so no partial line remains, and rethrows the original
 * error. A failed rollback is swallowed: the caller must truncate to `position` before its next write.
 */
export async function appendDurably(target: AppendTarget, position: number, data: Uint8Array, sync = true): Promise<void> {
  try {
    writeAll(target, data, position)
    if (sync) await target.sync()
  } catch (error) {
    try {
      target.truncate(position)
      if (sync) await target.sync()
    } catch {
      // Reported through the original error; the caller re-truncates before writing again.
    }
    throw error
  }
}

/**
 * Creates `file` holding exactly `content`, or fails with `SESSION_EXISTS` if it exists: no reader
 * ever sees it partly written, and an existing file is never overwritten. Returns a descriptor open
 * for writing on the new file; the caller closes it.
 */
export async function publishFile(file: string, content: Uint8Array, offLoop = false): Promise<number> {
  const folder = join(file, '..')
  const temp = join(folder, `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`)
  const fd = openSync(temp, 'wx', PRIVATE_FILE_MODE)
  let linked = false
  try {
    const target = fileTarget(fd, offLoop)
    writeAll(target, content, 0)
    await target.sync()
    try {
      linkSync(temp, file)
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error
      throw new ReinError('SESSION_EXISTS', `${file} already exists and was left untouched; create the session under another id, or open() the existing one`, { cause: error, details: { file } })
    }
    linked = true
    await syncFolder(folder, offLoop)
    return fd
  } catch (error) {
    if (linked) quietly(() => unlinkSync(file))
    closeSync(fd)
    throw error
  } finally {
    quietly(() => unlinkSync(temp))
  }
}

/** Writes a small file whole with mode 0600, failing if it exists (`wx`); a file it could not fill is removed. */
export function writeNewPrivateFile(file: string, text: string): void {
  const fd = openSync(file, 'wx', PRIVATE_FILE_MODE)
  try {
    writeAll(fileTarget(fd), Buffer.from(text), 0)
  } catch (error) {
    quietly(() => unlinkSync(file))
    throw error
  } finally {
    closeSync(fd)
  }
}

function writeAll(target: AppendTarget, data: Uint8Array, position: number): void {
  let offset = 0
  while (offset < data.length) {
    const written = target.write(data, offset, data.length - offset, position + offset)
    if (written <= 0) throw new Error(`the write stopped after ${offset} of ${data.length} bytes`)
    offset += written
  }
}

/** Fsyncs a folder, so the names linked into it last a power cut. */
async function syncFolder(folder: string, offLoop: boolean): Promise<void> {
  const fd = openSync(folder, 'r')
  try {
    if (offLoop) await fsyncOffLoop(fd)
    else fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Runs a clean-up whose failure changes nothing for the caller. */
export function quietly(action: () => void): void {
  try {
    action()
  } catch {
    // Nothing to do: what it would have removed is harmless (a temp file, a lock we no longer hold).
  }
}
