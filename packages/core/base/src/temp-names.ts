/**
 * Names for the temporary copy a file is written through before a rename: beside the file, so it
 * must fit the same 255-byte name limit the file's own name already fills.
 */

import { createHash } from 'node:crypto'
import { cutToBytes } from './text-cut.ts'

/** The longest file name ext4, xfs, btrfs and tmpfs take, in bytes. */
const NAME_MAX_BYTES = 255
/** What a caller may add after the stem (a pid, a random part, a mark), in bytes. */
export const TEMP_TAIL_MAX_BYTES = 64
/** `~` and an 8-hex digest of the whole name, added to a name that had to be cut. */
const DIGEST_BYTES = 9

/**
 * How the temporary copies of a file named `name` begin: `.name.`, or, when that and a tail of up
 * to `TEMP_TAIL_MAX_BYTES` would not fit in a name, the name cut at a character with a digest of
 * the whole (two long names never share a stem). The same name always gives the same stem, so
 * leftovers are found by it.
 */
export function tempStem(name: string): string {
  const room = NAME_MAX_BYTES - TEMP_TAIL_MAX_BYTES - 2
  if (Buffer.byteLength(name) <= room) return `.${name}.`
  return `.${cutToBytes(name, room - DIGEST_BYTES)}~${createHash('sha256').update(name).digest('hex').slice(0, 8)}.`
}

/** `name` with `suffix` after it, the name cut (between characters) so the whole fits the 255-byte limit. */
export function withSuffix(name: string, suffix: string): string {
  return `${cutToBytes(name, NAME_MAX_BYTES - Buffer.byteLength(suffix))}${suffix}`
}
