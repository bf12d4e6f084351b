/**
 * Cutting text by UTF-16 units (what `length` counts) or by UTF-8 bytes (what a file name's limit
 * counts) without splitting a character: half an emoji is not well-formed text, and a provider that
 * checks its input refuses every request that carries it, for the rest of the session.
 */

/** Half of a UTF-16 pair on its own (often a cut emoji): with the `u` flag a whole pair is one code point, not a surrogate. */
export const LONE_SURROGATE = /\p{Cs}/u

/**
 * The first `max` units of `text`, one fewer where the cut would split a pair. A text ending in half
 * a pair (the start of a streamed line) loses that half too, so a line cut while it arrives is cut
 * as it would be whole.
 */
export function cutHead(text: string, max: number): string {
  const end = Math.max(0, Math.min(max, text.length))
  return text.slice(0, end > 0 && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end)
}

/** The last `max` units of `text`, one fewer where the cut would split a pair. */
export function cutTail(text: string, max: number): string {
  const start = Math.max(0, text.length - Math.max(0, max))
  return text.slice(isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start)
}

/** `text` when it has at most `max` units, else its head and `…`, `max` units at most in all. */
export function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${cutHead(text, max - 1)}…`
}

/** The longest start of `text` that takes at most `maxBytes` in UTF-8, cut between characters. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  let cut = ''
  let bytes = 0
  for (const character of text) {
    bytes += Buffer.byteLength(character)
    if (bytes > maxBytes) break
    cut += character
  }
  return cut
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Characters as a person counts them (and JSON Schema's string lengths): code points, so an emoji is one. */
export function codePointCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** `text` as JSON `\uXXXX` escapes, one per UTF-16 unit (a pair for a character past U+FFFF): the same text to a JSON reader, inert on a terminal. */
export function unicodeEscapes(text: string): string {
  let escaped = ''
  for (let index = 0; index < text.length; index++) escaped += `\\u${text.charCodeAt(index).toString(16).padStart(4, '0')}`
  return escaped
}
