/** A path or file name on a line of its own, for a listing, a table or a message: quoted when it could break out of it. */

// oxlint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/
/** What `JSON.stringify` leaves as it is of those: DEL, C1 (`\x9b` starts a terminal sequence), U+2028/2029. */
const UNESCAPED = /[\x7f-\x9f\u2028\u2029]/g

/**
 * A path as a listing shows it: quoted as JSON when it holds a line break or another control
 * character (C0, DEL, C1, U+2028/2029; a command can make such a name), so it stays on its line,
 * cannot pass for a line of the text around it, and sends no escape sequence to a terminal.
 */
export function listedPath(path: string): string {
  if (!CONTROL.test(path)) return path
  return JSON.stringify(path).replace(UNESCAPED, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
