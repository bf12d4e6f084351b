/** A path or file name on a line of its own, for a listing, a table or a message: quoted when it could break out of it. */

import { unicodeEscapes } from './text-cut.ts'

// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
/**
 * What `JSON.stringify` leaves as it is of those: DEL, C1 (`\x9b` starts a terminal sequence),
 * U+2028/2029, and the bidi embeddings, overrides and isolates (a name can make the text after it read reversed).
 */
const UNESCAPED = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * A path as a listing shows it: quoted as JSON when it holds a line break or another control
 * character (C0, DEL, C1, U+2028/2029; a command can make such a name) or a bidi control
 * (U+202A–202E, U+2066–2069), so it stays on its line, cannot pass for a line of the text around
 * it, sends no escape sequence to a terminal, and does not reorder what is shown after it.
 */
export function listedPath(path: string): string {
  if (!CONTROL.test(path)) return path
  return JSON.stringify(path).replace(UNESCAPED, unicodeEscapes)
}
