/**
 * What a thrown value that is not a `ReinError` says, for the message the model and the user read.
 * Tool packages throw whatever their libraries throw: an Error, a string, or a plain object such as
 * `{code: 'E_QUOTA', message: 'quota exceeded'}` from an HTTP client. Its words must reach the
 * model, but a thrown payload (a whole response, a record set, a request with its headers) must
 * not: an object is shown by its top-level fields only, nested values as `{…}` or `[…]`, masked as
 * rein masks config, and every text held to `MAX_THROWN_CHARS`.
 */

import { isReinError, maskSecrets, maskText, secretValues, shorten, thrownMessage } from '@rein/base'

/** The longest message taken from a thrown string or object: enough to say what failed, never a payload. */
const MAX_THROWN_CHARS = 2_000
/** The most fields shown of a thrown object: its first ones say what it is. */
const MAX_FIELDS = 20
/** The longest text shown of one field. */
const MAX_FIELD_CHARS = 300

/**
 * `message`: what it said (an Error's message as it is; a string; an object's `code: message`);
 * `rendering`: what it was, as short JSON of its top-level fields, when it said nothing in words;
 * nothing when it holds nothing to show (null, undefined, `{}`, an Error with no message). Never throws.
 */
export type ThrownWords = { message: string } | { rendering: string } | undefined

export function thrownWords(thrown: unknown): ThrownWords {
  try {
    return wordsOf(thrown)
  } catch {
    // A getter that throws, a Proxy whose traps throw or one revoked (even `instanceof` throws): it said nothing we can read.
    return undefined
  }
}

function wordsOf(thrown: unknown): ThrownWords {
  if (thrown instanceof Error) {
    // Masked, not cut: a library's Error may quote the request it sent (a URL with its key).
    const message = thrownMessage(thrown)
    return message === undefined ? undefined : { message: masked(message) }
  }
  if (typeof thrown === 'string') return thrown === '' ? undefined : { message: masked(shorten(thrown, MAX_THROWN_CHARS)) }
  if (typeof thrown !== 'object' || thrown === null) {
    const message = thrownMessage(thrown)
    return message === undefined ? undefined : { message }
  }
  const message = objectMessage(thrown)
  if (message !== undefined) return { message: masked(message) }
  const rendering = fieldsJson(thrown)
  return rendering === '{}' ? undefined : { rendering }
}

/**
 * What a thrown value said, masked and cut as `thrownWords` does, for a message quoting it: its
 * words, else `it threw <rendering>`; undefined when it holds nothing to show. Never throws.
 */
export function thrownText(thrown: unknown): string | undefined {
  const words = thrownWords(thrown)
  if (words === undefined) return undefined
  return 'message' in words ? words.message : `it threw ${words.rendering}`
}

/**
 * A thrown `ReinError`'s code and message, read once; undefined for anything else. Never throws:
 * a Proxy can pass `isReinError` (its brand read answers true) and still throw when `code` or `message` is read.
 */
export function reinErrorParts(thrown: unknown): { code: string; message: string } | undefined {
  if (!isReinError(thrown)) return undefined
  try {
    const { code, message } = thrown
    return typeof code === 'string' && typeof message === 'string' ? { code, message } : undefined
  } catch {
    return undefined
  }
}

/** What was thrown, named for a message: `null`, `an Error with no message`, `an object`. Never throws. */
export function thrownKind(thrown: unknown): string {
  if (thrown === null || thrown === undefined) return String(thrown)
  if (typeof thrown !== 'object') return `a ${typeof thrown}`
  try {
    return thrown instanceof Error ? 'an Error with no message' : 'an object'
  } catch {
    return 'an object that cannot be read'
  }
}

/** An object's string `message`, after its `code` (a string or a number) unless the message already names it. */
function objectMessage(thrown: object): string | undefined {
  const message: unknown = Reflect.get(thrown, 'message')
  if (typeof message !== 'string' || message === '') return undefined
  const code: unknown = Reflect.get(thrown, 'code')
  const named = typeof code === 'number' ? String(code) : typeof code === 'string' ? code : ''
  const said = named !== '' && !message.includes(named) ? `${named}: ${message}` : message
  return shorten(said, MAX_THROWN_CHARS)
}

/**
 * A thrown object as JSON of its first top-level fields, masked as rein masks config: a field named
 * like a credential, and the environment's secret values in any text. Binary data and arrays are
 * named by their size, never walked: a thrown Buffer of 50 MB costs as little to say as one of 5 bytes.
 */
function fieldsJson(thrown: object): string {
  const whole = container(thrown)
  if (whole !== undefined) return JSON.stringify(whole)
  const fields: Record<string, unknown> = Object.create(null)
  let shown = 0
  for (const key of Object.keys(thrown)) {
    if (shown === MAX_FIELDS) {
      fields['…'] = 'more fields'
      break
    }
    const value = fieldValue(Reflect.get(thrown, key))
    if (value === undefined) continue
    fields[key] = value
    shown++
  }
  return shorten(JSON.stringify(maskSecrets(fields, secretValues(process.env))), MAX_THROWN_CHARS)
}

/** One field's value as shown: a primitive as it is (a long string cut), anything else by what it is; undefined for what JSON leaves out. */
function fieldValue(value: unknown): string | number | boolean | null | undefined {
  if (value === null || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'string') return shorten(value, MAX_FIELD_CHARS)
  if (typeof value !== 'object') return undefined
  return container(value) ?? (value instanceof Error ? shorten(thrownMessage(value) ?? 'an Error', MAX_FIELD_CHARS) : '{…}')
}

/** Binary data, an array, a Map or a Set, named by its size; undefined for anything else. */
function container(value: object): string | undefined {
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`
  if (Array.isArray(value)) return `[${value.length} items]`
  if (value instanceof Map || value instanceof Set) return `[${value.constructor.name} of ${value.size}]`
  return undefined
}

/** `text` with the values of the environment's secrets (API keys and the like) masked. */
export function masked(text: string): string {
  return maskText(text, secretValues(process.env))
}
