/**
 * Finds numbers in JSON text that `JSON.parse` would round: digits written out past
 * Number.MAX_SAFE_INTEGER. Runs only on text `JSON.parse` already accepted, and only when the text
 * has a run of 16 digits, so the common call pays for one regular-expression test.
 */

import { childPath } from '@rein/base'

const LONG_DIGIT_RUN = /\d{16}/
const SAFE = String(Number.MAX_SAFE_INTEGER)

/** A number token the model wrote that a double cannot hold, with the JSON path it sits at. */
export interface InexactNumber {
  path: string
  text: string
}

/**
 * Every number in `text` (valid JSON) whose integer part is beyond ±(2^53 - 1). Exponent notation
 * is left alone: it is float notation, rounded as floats are. Strings, keys included, are skipped.
 */
export function findInexactNumbers(text: string): InexactNumber[] {
  if (!LONG_DIGIT_RUN.test(text)) return []
  const found: InexactNumber[] = []
  // One frame per open container: an object remembers where its current key's text is, an array its index.
  const stack: ({ keyStart: number; keyEnd: number } | { index: number })[] = []
  let expectKey = false
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i)
      const top = stack.at(-1)
      if (expectKey && top && 'keyStart' in top) {
        top.keyStart = i
        top.keyEnd = end
        expectKey = false
      }
      i = end
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i
      while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
      const token = text.slice(start, i)
      if (tooLarge(token)) found.push({ path: pathOf(text, stack), text: token })
    } else {
      if (c === 0x7b /* { */) {
        stack.push({ keyStart: -1, keyEnd: -1 })
        expectKey = true
      } else if (c === 0x5b /* [ */) stack.push({ index: 0 })
      else if (c === 0x7d /* } */ || c === 0x5d /* ] */) stack.pop()
      else if (c === 0x2c /* , */) {
        const top = stack.at(-1)
        if (top && 'index' in top) top.index++
        else expectKey = true
      }
      i++
    }
  }
  return found
}

/** The index just past the closing quote of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let quote = text.indexOf('"', start + 1)
  for (;;) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c /* \ */) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    quote = text.indexOf('"', quote + 1)
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45
}

function tooLarge(token: string): boolean {
  if (/[eE]/.test(token)) return false
  const digits = token.replace(/^-/, '').replace(/\..*$/, '')
  // JSON forbids leading zeros, so more digits means larger; equal lengths compare as strings.
  return digits.length > SAFE.length || (digits.length === SAFE.length && digits > SAFE)
}

function pathOf(text: string, stack: readonly ({ keyStart: number; keyEnd: number } | { index: number })[]): string {
  let path = '$'
  for (const frame of stack) {
    path = 'index' in frame ? childPath(path, frame.index) : childPath(path, JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string)
  }
  return path
}
