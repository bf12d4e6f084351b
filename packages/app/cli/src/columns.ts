/**
 * Table cells padded to the columns a terminal shows them in, not to their UTF-16 length: a
 * combining mark takes no column, a CJK character or an emoji two, a ZWJ sequence two in all.
 * Padding by `.length` would push every later column of such a row out of line.
 */

import stringWidth from 'string-width'

/** How many terminal columns `text` takes. */
export function displayWidth(text: string): number {
  return stringWidth(text)
}

/** `text`, then spaces up to `width` columns. */
export function padEndColumns(text: string, width: number): string {
  return `${text}${' '.repeat(Math.max(0, width - displayWidth(text)))}`
}

/** Spaces up to `width` columns, then `text`. */
export function padStartColumns(text: string, width: number): string {
  return `${' '.repeat(Math.max(0, width - displayWidth(text)))}${text}`
}

/**
 * `text` in at most `width` columns: cut between graphemes, so an emoji sequence or a character
 * with its marks stays whole, and ended with `…` when anything was left out.
 */
export function clipColumns(text: string, width: number): string {
  if (displayWidth(text) <= width) return text
  let kept = ''
  let used = 0
  for (const { segment } of new Intl.Segmenter().segment(text)) {
    const columns = displayWidth(segment)
    if (used + columns > width - 1) break
    kept += segment
    used += columns
  }
  return `${kept}…`
}
