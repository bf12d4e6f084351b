/**
 * Names for the temporary copy a file is written through before a rename: beside the file, so it
 * must fit the same 255-byte name limit the file's own name already fills.
 */

import { createHash } from 'node:crypto'

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
  let cut = ''
  let bytes = 0
  for (const character of name) {
    bytes += Buffer.byteLength(character)
    if (bytes > room - DIGEST_BYTES) break
    cut += character
  }
  return `.${cut}~${createHash('sha256').update(name).digest('hex').slice(0, 8)}.`
}
