/** How entries read to the model: ages, dates, one-line contents. */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/** "just now", "5 minutes ago", "1 day ago", "3 months ago", "2 years ago". */
export function age(then: number, now: number): string {
  const elapsed = Math.max(0, now - then)
  if (elapsed < MINUTE) return 'just now'
  if (elapsed < HOUR) return ago(Math.floor(elapsed / MINUTE), 'minute')
  if (elapsed < DAY) return ago(Math.floor(elapsed / HOUR), 'hour')
  if (elapsed < 60 * DAY) return ago(Math.floor(elapsed / DAY), 'day')
  if (elapsed < 365 * DAY) return ago(Math.floor(elapsed / (30 * DAY)), 'month')
  return ago(Math.floor(elapsed / (365 * DAY)), 'year')
}

/** The UTC day, `2025-11-28`: the same for everyone, whatever the clock's zone. */
export function day(time: number): string {
  return new Date(time).toISOString().slice(0, 10)
}

/**
 * Characters a reader cannot see that change what a model reads or how a line shows: controls
 * other than tab and line breaks, the soft hyphen, the combining grapheme joiner, bidi marks,
 * embeddings, overrides and isolates (U+061C, U+200E–200F, U+202A–202E, U+2066–2069), zero-width
 * space, word joiner and invisible math operators (U+2060–2064), deprecated format characters
 * (U+206A–206F), Hangul and Khmer fillers (U+115F, U+1160, U+17B4–17B5, U+3164, U+FFA0), Mongolian
 * and other variation selectors (U+180B–180F, U+FE00–FE0D, U+E0100–E01EF: they can carry hidden
 * bytes), interlinear annotation marks (U+FFF9–FFFB), musical formatting (U+1D173–1D17A), the
 * byte-order mark, and tag characters (invisible ASCII a model still reads). What emoji and some
 * scripts need stays: the joiners U+200C and U+200D, and the presentation selectors U+FE0E and
 * U+FE0F (`❤️` is U+2764 U+FE0F).
 */
// Each is matched alone, combining marks (U+034F, U+17B4…) and joiners too: that is the point.
// oxlint-disable-next-line no-control-regex, no-misleading-character-class -- control characters and lone marks are what it finds
export const HIDDEN_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFE00-\uFE0D\uFEFF\uFFA0\uFFF9-\uFFFB\u{1D173}-\u{1D17A}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u
const HIDDEN_CHARACTERS = new RegExp(HIDDEN_CHARACTER.source, 'gu')

/** Hidden characters dropped and whitespace runs (newlines included) made one space, so an entry stays one visible line. */
export function oneLine(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, '').replace(/\s+/g, ' ').trim()
}

/** Characters as a person counts them: code points, so an emoji is one. */
export function charCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** The first `count` characters (code points, so a cut never splits a surrogate pair) of `text`. */
export function headOf(text: string, count: number): string {
  let head = ''
  let taken = 0
  for (const char of text) {
    if (taken++ === count) break
    head += char
  }
  return head
}

/** At most `max` characters of one line, with `…` when cut. */
export function clip(text: string, max: number): string {
  const line = oneLine(text)
  let head = ''
  let count = 0
  // By code point, so a cut never splits a surrogate pair.
  for (const char of line) {
    count++
    if (count > max) return `${head}…`
    if (count < max) head += char
  }
  return line
}

function ago(count: number, unit: string): string {
  return `${count} ${unit}${count === 1 ? '' : 's'} ago`
}
