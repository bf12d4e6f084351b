/**
 * The witness beside the log (`checkpoints.last-seq`): the highest `seq` this store made durable
 * in it, and which file the log was (device and inode). A log cut short at the end — truncated,
 * whole records gone — reads as a shorter whole log (and a torn last line as a crash's), so only
 * something outside it can say records are missing: a load finding a lower `seq` in the file the
 * witness names is damage. A log moved aside and made again is another file, which it says
 * nothing of.
 *
 * It is written after the record's line is fsynced (and after a compaction's rename), in place,
 * and not fsynced itself: a crash can only leave it behind the log (the check then sees less), never ahead
 * of it. A failure to write it loses nothing but the check, so it never fails the record.
 */

import { closeSync, constants, ftruncateSync, openSync, writeSync, type Stats } from 'node:fs'
import { readFile, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { PRIVATE_FILE_MODE } from '@rein/base'

/** The witness's name in the session folder. */
const WITNESS_FILE = 'checkpoints.last-seq'

/** Its text: `<seq> <dev> <ino>` zero-padded and a newline, nothing else (stray bytes are not a witness). */
const WITNESS_TEXT = /^(\d{16}) (\d{20}) (\d{20})\n$/

/** What the witness says: the highest `seq` recorded into the log that was the file `dev`/`ino`. */
export interface Witness {
  seq: number
  dev: number
  ino: number
}

/** The witness; `undefined` when it is absent or unreadable (a log from before it). */
export async function readWitness(folder: string): Promise<Witness | undefined> {
  let text: string
  try {
    text = await readFile(join(folder, WITNESS_FILE), 'utf8')
  } catch {
    return undefined
  }
  const match = WITNESS_TEXT.exec(text)
  if (!match) return undefined
  const [seq, dev, ino] = [match[1], match[2], match[3]].map(Number) as [number, number, number]
  return Number.isSafeInteger(seq) && seq > 0 ? { seq, dev, ino } : undefined
}

/** The highest `seq` the witness says was recorded into `log` (the open log's stats); `undefined` when it speaks of another file. */
export function recordedThrough(witness: Witness | undefined, log: Stats): number | undefined {
  // An inode of 0 names no file (some file systems): nothing to tell a new log from the old one by.
  if (witness === undefined || log.ino === 0 || witness.ino !== log.ino || witness.dev !== log.dev) return undefined
  return witness.seq
}

/**
 * Says `seq` was recorded into `log` (the open log, for its device and inode): the file overwritten
 * in place with a line of one fixed length, so a reader sees the old line or the new one, never a
 * shorter file. No temp file and no fsync: it runs once per record, beside the record's own fsync.
 * Best effort (see the module comment): nothing it meets, the log's `fstat` included, fails the record.
 */
export async function writeWitness(folder: string, seq: number, log: FileHandle): Promise<void> {
  try {
    const stats = await log.stat()
    // Never through a link planted at the name; created private.
    const fd = openSync(join(folder, WITNESS_FILE), constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, PRIVATE_FILE_MODE)
    try {
      const line = witnessLine(seq, stats)
      writeSync(fd, line, 0)
      // A no-op once the file holds a witness: anything longer that was there before goes.
      ftruncateSync(fd, line.length)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Only the check is lost.
  }
}

/** `<seq> <dev> <ino>`, each zero-padded to its full width: every line has the same length. */
function witnessLine(seq: number, log: Stats): string {
  return `${String(seq).padStart(16, '0')} ${String(log.dev).padStart(20, '0')} ${String(log.ino).padStart(20, '0')}\n`
}

/**
 * Removes the witness before a new log is made: it speaks of a log that is gone (moved aside or
 * deleted to start afresh), whose inode the new file may be given again. Best effort, like the
 * writes: one that cannot be removed (a folder in its place) cannot be read either.
 */
export async function forgetWitness(folder: string): Promise<void> {
  await unlink(join(folder, WITNESS_FILE)).catch(() => undefined)
}
