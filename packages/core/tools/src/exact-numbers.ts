/**
 * Finds what `JSON.parse` loses without a word, in text it already accepted: numbers it would round
 * (digits written out past Number.MAX_SAFE_INTEGER), and a key given twice in one object (it keeps
 * the last). Each scan runs only when a regular expression says the text could hold one, so the
 * common call pays for two.
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
  scan(text, {
    number: (token, stack) => {
      if (tooLarge(token)) found.push({ path: pathOf(text, stack), text: token })
    },
  })
  return found
}

/**
 * The paths of the properties `text` (valid JSON) gives more than once in one object, which
 * `JSON.parse` would keep the last of. `keys` is how many keys the parsed value holds: when the
 * text cannot hold more, it holds no repeat, and is not scanned.
 */
export function findRepeatedKeys(text: string, keys: number): string[] {
  if (countUpTo(text, KEY_END, keys + 1) <= keys) return []
  const found: string[] = []
  scan(text, {
    key: (name, frame, stack) => {
      frame.names ??= new Set()
      if (frame.names.has(name)) found.push(pathOf(text, stack))
      else frame.names.add(name)
    },
  })
  return found
}

/** What ends a key: its closing quote and the colon. A string holding `":` counts too, so this is at least the number of keys. */
const KEY_END = /"\s*:/g

/** How many matches of `pattern` (global) `text` has, counting no further than `limit`. */
function countUpTo(text: string, pattern: RegExp, limit: number): number {
  pattern.lastIndex = 0
  let count = 0
  while (count < limit && pattern.test(text)) count++
  return count
}

/** One open container: an object remembers where its current key's text is (and, when asked, the names seen), an array its index. */
type Frame = { keyStart: number; keyEnd: number; names?: Set<string> } | { index: number }
type ObjectFrame = Extract<Frame, { keyStart: number }>

interface Visitor {
  number?: (token: string, stack: readonly Frame[]) => void
  /** A key, decoded, with the object it belongs to (its `keyStart`/`keyEnd` already at this key). */
  key?: (name: string, frame: ObjectFrame, stack: readonly Frame[]) => void
}

/** Walks the tokens of `text` (valid JSON), telling `visit` of each number and key with where it sits. */
function scan(text: string, visit: Visitor): void {
  const stack: Frame[] = []
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
        visit.key?.(JSON.parse(text.slice(i, end)) as string, top, stack)
      }
      i = end
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i
      while (i < text.length && isNumberChar(text.charCodeAt(i))) i++
      visit.number?.(text.slice(start, i), stack)
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

function pathOf(text: string, stack: readonly Frame[]): string {
  let path = '$'
  for (const frame of stack) {
    path = 'index' in frame ? childPath(path, frame.index) : childPath(path, JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string)
  }
  return path
}
