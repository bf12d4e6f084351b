/** How entries read to the model: ages, dates, one-line contents. */

import { HIDDEN_CHARACTER } from '@rein/base'

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

const HIDDEN_CHARACTERS = new RegExp(HIDDEN_CHARACTER.source, 'gu')

/** Hidden characters dropped and whitespace runs (newlines included) made one space, so an entry stays one visible line. */
export function oneLine(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, '').replace(/\s+/g, ' ').trim()
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
