/** A value as one word a person can paste into a POSIX shell, in advice that names a command to run. */

/** Characters no shell gives a meaning to in a word. */
const PLAIN = /^[\w@%+=:,./-]+$/

/**
 * `value` as one shell word: as it is when it is plain, else in single quotes, where nothing is
 * expanded (`$`, a backtick, `!`), a single quote written `'\''`.
 */
export function shellWord(value: string): string {
  return PLAIN.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`
}
