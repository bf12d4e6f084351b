/**
 * What a thrown value that is not a `ReinError` says, for the message the model and the user read.
 * Tool packages throw whatever their libraries throw: an Error, a string, or a plain object such as
 * `{code: 'E_QUOTA', message: 'quota exceeded'}` from an HTTP client. Its words must reach the
 * model, but a thrown payload (a whole response, a record set) must not: every text taken from
 * something other than an Error is held to `MAX_THROWN_CHARS`.
 */

import { shorten, thrownMessage } from '@rein/base'

/** The longest message taken from a thrown string or object: enough to say what failed, never a payload. */
const MAX_THROWN_CHARS = 2_000
/** Nesting past this is shown as `"[…]"`: a deep structure says nothing more, and recursion stays shallow. */
const MAX_DEPTH = 8

/**
 * `message`: what it said (an Error's message as it is; a string; an object's `code: message`);
 * `rendering`: what it was, as short JSON, when it said nothing in words; nothing when it holds
 * nothing to show (null, undefined, `{}`, an Error with no message). Never throws.
 */
export type ThrownWords = { message: string } | { rendering: string } | undefined

export function thrownWords(thrown: unknown): ThrownWords {
  if (thrown instanceof Error) {
    const message = thrownMessage(thrown)
    return message === undefined ? undefined : { message }
  }
  if (typeof thrown === 'string') return thrown === '' ? undefined : { message: shorten(thrown, MAX_THROWN_CHARS) }
  if (typeof thrown !== 'object' || thrown === null) {
    const message = thrownMessage(thrown)
    return message === undefined ? undefined : { message }
  }
  try {
    const message = objectMessage(thrown)
    if (message !== undefined) return { message }
    const rendering = boundedJson(thrown, MAX_THROWN_CHARS)
    return rendering === undefined || rendering === '{}' || rendering === '[]' ? undefined : { rendering }
  } catch {
    // A getter that throws, a revoked proxy: it said nothing we can read.
    return undefined
  }
}

/** An object's string `message`, after its string `code` unless the message already names it. */
function objectMessage(thrown: object): string | undefined {
  const message: unknown = Reflect.get(thrown, 'message')
  if (typeof message !== 'string' || message === '') return undefined
  const code: unknown = Reflect.get(thrown, 'code')
  const said = typeof code === 'string' && code !== '' && !message.includes(code) ? `${code}: ${message}` : message
  return shorten(said, MAX_THROWN_CHARS)
}

const FULL = Symbol('full')

/**
 * JSON of `value`, cut to `max` characters with `…`, built piece by piece so that a huge object
 * costs only the part shown; a reference back to an enclosing object is `"[circular]"`.
 */
function boundedJson(value: unknown, max: number): string | undefined {
  let out = ''
  const enclosing: object[] = []
  const write = (text: string) => {
    out += text
    if (out.length > max) throw FULL
  }
  const walk = (item: unknown, depth: number): boolean => {
    if (item === null || typeof item === 'boolean') write(String(item))
    else if (typeof item === 'number') write(Number.isFinite(item) ? String(item) : 'null')
    else if (typeof item === 'bigint') write(JSON.stringify(String(item)))
    // Sliced first: JSON.stringify of a megabyte string would copy all of it to show a line.
    else if (typeof item === 'string') write(JSON.stringify(item.length > max ? item.slice(0, max) : item))
    else if (typeof item !== 'object') return false
    else if (item instanceof Error) write(JSON.stringify(shorten(thrownMessage(item) ?? 'an Error with no message', max)))
    else if (enclosing.includes(item)) write('"[circular]"')
    else if (depth >= MAX_DEPTH) write('"[…]"')
    else walkObject(item, depth)
    return true
  }
  const walkObject = (item: object, depth: number) => {
    enclosing.push(item)
    if (Array.isArray(item)) {
      write('[')
      for (let index = 0; index < item.length; index++) {
        if (index > 0) write(',')
        if (!walk(item[index], depth + 1)) write('null')
      }
      write(']')
    } else {
      write('{')
      let first = true
      // for…in, not Object.keys: a huge object is left at the first keys that fill the budget.
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue
        const field: unknown = Reflect.get(item, key)
        if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue
        write(`${first ? '' : ','}${JSON.stringify(key)}:`)
        first = false
        walk(field, depth + 1)
      }
      write('}')
    }
    enclosing.pop()
  }
  try {
    return walk(value, 0) ? out : undefined
  } catch (error) {
    if (error !== FULL) throw error
    return shorten(out, max)
  }
}
