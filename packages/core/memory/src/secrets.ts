/**
 * Content that looks like a credential. Memory is put into the model's prompt in every session (and
 * user memory in every project), and session logs keep the block they recorded: a key saved once
 * would leak again and again. Only shapes a key has and prose does not (a prefix, then a long run),
 * and the values of this process's environment variables named like secrets.
 */

import { KEY_SHAPES, keyBody, maskKeyShapes, secretEnvironment } from '@rein/base'

/** The kind of the first credential-like text in `content` (`a GitHub token`), or `undefined`; never the text itself. */
export function secretKind(content: string): string | undefined {
  return KEY_SHAPES.find(({ pattern }) => pattern.test(content))?.kind
}

/**
 * `text` with every credential-like run, and every secret variable's value `secretVariableIn`
 * would find, replaced by what it is (`[an sk- API key]`, `[$OPENAI_API_KEY]`): for showing a call
 * that memory refuses (a tool line), which must not show the key either.
 */
export function maskSecrets(text: string): string {
  return secretMasker()(text)
}

/**
 * `maskSecrets` with this process's secret variables read once, for masking many texts: each entry
 * a reader gets (a key saved before it was known as one reads masked, as `write` would refuse it).
 */
export function secretMasker(): (text: string) => string {
  // Variables first, longest first: a key whose start has a shape (`sk-…/…`) is masked whole, not
  // cut at the end of that shape with its tail left for the variable's pass to miss.
  const keys = secretKeys().sort((a, b) => b.key.length - a.key.length)
  return (text) => {
    let masked = text
    for (const { name, key } of keys) if (masked.includes(key)) masked = masked.split(key).join(`[$${name}]`)
    return maskKeyShapes(masked, (kind) => `[${kind}]`)
  }
}

/** Variables that say where a secret is (`GOOGLE_APPLICATION_CREDENTIALS_FILE`, `SSH_KEY_PATH`), not what it is. */
const NAMES_A_PLACE = /_(?:FILE|PATH|DIR|URL|HOME)$/i

/**
 * A value that can only be a key: at least 12 characters, letters and digits, no space, not a path
 * or a URL. `POSTGRES_PASSWORD=postgres` or `DB_PASSWORD=changeme` must not refuse prose that says
 * "postgres" or "changeme".
 */
function looksLikeKey(value: string): boolean {
  return value.length >= 12 && /[A-Za-z]/.test(value) && /\d/.test(value) && !/\s/.test(value) && !/^[/~.]|:\/\//.test(value)
}

/**
 * The name of an environment variable named like a secret (`OPENAI_API_KEY`) whose value, when it
 * looks like a key, `content` holds; or `undefined`. A key of this process, whatever its shape.
 */
export function secretVariableIn(content: string): string | undefined {
  return secretKeys().find(({ key }) => content.includes(key))?.name
}

/** This process's environment variables named like secrets whose values look like keys, trimmed, and each key's body without its kind prefix (`sk-proj-`). */
function secretKeys(): { name: string; key: string }[] {
  return secretEnvironment(process.env)
    .map(({ name, value }) => ({ name, key: value.trim() }))
    .filter(({ name, key }) => !NAMES_A_PLACE.test(name) && looksLikeKey(key))
    .flatMap((entry) => {
      const body = keyBody(entry.key)
      return body === undefined ? [entry] : [entry, { name: entry.name, key: body }]
    })
}
