/**
 * Masks secrets in config before it is shown: text under a key named like a secret or under
 * `headers`, credentials
 * inside URLs (user:password@, secret-named query parameters; in a value that is a whole web URL,
 * also a key in its path and a query value as long as a key), and any text
 * equal to (or, for values of 8 characters or more, holding) the value of an environment variable
 * named like one, or that value's body after a kind prefix (`sk-proj-`) when 16 characters or
 * more. A number under such a key is masked too; a boolean is shown.
 */

import { maskKeyShapes } from './key-shapes.ts'
import { isSecretName, secretEnvironment } from './secret-names.ts'
import { maskUrlText } from './shown-url.ts'

const MASK = '***'
/**
 * A config value that is a whole web URL (a `baseURL`, an `endpoint`): shown as a provider's own
 * messages show it (`maskUrlText`). Only such a value: in free text, a path segment after `keys/`
 * or a long query value is most often no key, and a message the model reads needs the URL whole.
 */
const HTTP_URL = /^(?:https?|wss?):\/\/\S+$/i
/** HTTP headers in config (a provider's, an OTLP collector's): any of them may carry a key, whatever its name (`x-honeycomb-team`). */
const HEADERS = /^headers$/i
/** Shorter values are masked only where they are the whole text: a 1-character token would mask every digit. */
const MIN_EMBEDDED = 8

/**
 * A key's kind before its body: `sk-`, `sk-proj-`, `ghp_`, `xoxb-`. What follows is the secret part,
 * which a message may quote alone.
 */
const KIND_PREFIX = /^[A-Za-z]{2,8}(?:[-_][A-Za-z]{2,8})?[-_]/
/** A body shorter than this is kept only with its prefix: alone it may be an ordinary word. */
const MIN_BODY = 16

/** The values of the environment variables named like secrets (and each one's body after a kind prefix), longest first. */
export function secretValues(env: NodeJS.ProcessEnv): string[] {
  const values = secretEnvironment(env).flatMap(({ value }) => {
    const trimmed = value.trim()
    const body = keyBody(trimmed)
    return body === undefined ? [value, trimmed] : [value, trimmed, body]
  })
  return [...new Set(values)].sort((a, b) => b.length - a.length)
}

/** A key's body after its kind prefix (`sk-proj-`, `ghp_`), when it has one and the body alone is long enough to be no word. */
export function keyBody(key: string): string | undefined {
  const body = key.replace(KIND_PREFIX, '')
  return body !== key && body.length >= MIN_BODY ? body : undefined
}

/**
 * A copy of `value` (plain data, as JSON would carry it) with the secrets replaced by `***`: the
 * given values, what is under a key named like a secret, URL credentials, and text shaped like a
 * key (`sk-…`, `ghp_…`, a JWT…) wherever it is.
 */
export function maskSecrets(value: unknown, secrets: readonly string[], secretKey = false): unknown {
  if (typeof value === 'string') return secretKey ? MASK : maskKeyShapes(maskText(HTTP_URL.test(value) ? maskUrlText(value) : value, secrets))
  // A key YAML read as a number (`x-api-key: 12345678901234`) is a secret all the same.
  if (secretKey && (typeof value === 'number' || typeof value === 'bigint')) return MASK
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, secrets, secretKey))
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSecrets(item, secrets, secretKey || isSecretName(key) || HEADERS.test(key))]))
  }
  return value
}

/**
 * The text and numbers `value` holds under a key named like a secret or under `headers` (what
 * `maskSecrets` masks there), longest first: what a message quoting part of the value, such as a
 * schema's `expected number but got …`, must not show.
 */
export function secretsIn(value: unknown): string[] {
  const found = new Set<string>()
  collectSecrets(value, false, new Set(), found)
  return [...found].sort((a, b) => b.length - a.length)
}

/** `ancestors`: the objects on the way down, so a cycle ends the walk (a shared object is walked under each key). */
function collectSecrets(value: unknown, secretKey: boolean, ancestors: Set<object>, found: Set<string>): void {
  if (secretKey && (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint')) {
    found.add(String(value))
    return
  }
  if (typeof value !== 'object' || value === null || ancestors.has(value)) return
  ancestors.add(value)
  if (Array.isArray(value)) for (const item of value) collectSecrets(item, secretKey, ancestors, found)
  else for (const [key, item] of Object.entries(value)) collectSecrets(item, secretKey || isSecretName(key) || HEADERS.test(key), ancestors, found)
  ancestors.delete(value)
}

/** A URL's user and password, and its query parameters named like secrets (`?api_key=…`). */
function maskUrlCredentials(text: string): string {
  return text
    .replace(/(\b[a-z][a-z\d+.-]*:\/\/)[^/?#\s@]*@/gi, `$1${MASK}@`)
    // A value ends where the URL ends in a sentence: at a closing bracket, quote or comma after it;
    // one in brackets (`[redacted]`, hidden already) is taken whole.
    .replace(/([?&])([^=&#\s]+)=(\[[^\]\s]*\]|[^&#\s)\]'",]*)/g, (whole, separator: string, name: string) => (isSecretName(name) ? `${separator}${name}=${MASK}` : whole))
}

/** `text` with credentials in URLs and the given secret values replaced by `***`. */
export function maskText(text: string, secrets: readonly string[]): string {
  let masked = maskUrlCredentials(text)
  for (const secret of secrets) {
    if (masked === secret) return MASK
    if (secret.length >= MIN_EMBEDDED) masked = masked.replaceAll(secret, MASK)
  }
  return masked
}
