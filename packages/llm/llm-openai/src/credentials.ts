/** API keys come from the environment by name; their values never appear in messages, logs or errors. */

import { isSecretName, ReinError } from '@rein/base'
import { LlmError } from '@rein/llm'

/** A header value an HTTP client can send: printable ASCII without spaces. */
const HEADER_SAFE = /^[\x21-\x7E]+$/

/** What a shell can export: letters, digits and `_`, not starting with a digit. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/**
 * A run of 24 or more letters and digits, both, between underscores: a random key (`gsk_…`, 32 and
 * more), not a name. Names are words joined by `_` (`ACME2024PRODUCTION_KEY` is one); a key whose
 * characters happen to fit a name is still a key.
 */
const KEY_SHAPED_RUN = /(?:^|_)(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{24,}(?:_|$)/
/** Keys mix lower case, upper case and digits (Google's `AIza…`, split by `_`); names keep to one case. */
const MIXED_CHARS = 20

/** Whether `name`, though it has a name's characters, reads as a random key. */
function keyShaped(name: string): boolean {
  if (KEY_SHAPED_RUN.test(name)) return true
  const chars = name.replaceAll('_', '')
  return chars.length >= MIXED_CHARS && /[a-z]/.test(chars) && /[A-Z]/.test(chars) && /\d/.test(chars)
}

/**
 * `apiKeyEnv` when it names an environment variable (or is `false`); else `CONFIG_INVALID` that
 * never quotes it: a value that is not a name is most likely the key itself, pasted in.
 * `example` is the provider's usual variable, shown as the fix.
 */
export function checkApiKeyEnv(apiKeyEnv: unknown, example?: string): string | false {
  if (apiKeyEnv === false) return false
  if (typeof apiKeyEnv === 'string' && VARIABLE_NAME.test(apiKeyEnv) && !keyShaped(apiKeyEnv)) return apiKeyEnv
  const fix = example ? `, e.g. apiKeyEnv: ${example}` : ''
  throw new ReinError('CONFIG_INVALID', `apiKeyEnv must be the name of the environment variable that holds the API key (letters, digits and _, not starting with a digit), or false for a server without keys, not the key itself: put the key in an environment variable and set apiKeyEnv to its name${fix} (the value given is not shown: it may be a key)`)
}

/** `false` means the server needs no key. Throws `MISSING_CREDENTIAL` or `INVALID_CREDENTIAL`. */
export function readApiKey(apiKeyEnv: string | false, provider: string): string | undefined {
  if (apiKeyEnv === false) return undefined
  const value = process.env[apiKeyEnv]?.trim()
  if (!value) {
    throw new LlmError({
      code: 'MISSING_CREDENTIAL',
      message: `${provider} needs an API key: set the environment variable ${apiKeyEnv} (or configure apiKeyEnv: false for a server without keys)`,
    })
  }
  if (!HEADER_SAFE.test(value)) {
    throw new LlmError({
      code: 'INVALID_CREDENTIAL',
      message: `the value of ${apiKeyEnv} contains characters an HTTP header cannot carry (spaces, quotes, line breaks or non-ASCII); check how it was set`,
    })
  }
  return value
}

/** Secrets shorter than this are not searched for: cutting a short one out would cut words out of every message. */
const SHORTEST_SECRET = 6

/**
 * Removes the credentials this adapter sends (the key, a password, a secret header's value), and
 * anything shaped like a key, from text a server sent back (some echo what they were sent).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length < SHORTEST_SECRET) continue
    for (const form of echoedForms(secret)) out = withoutParts(out.split(form).join('[redacted]'), form)
  }
  // Key-shaped: `sk-` and 6 or more characters (OpenAI quotes a key as `sk-test-abc***6789`), or
  // `key-`/`api-` and 16 or more with a digit among them (a key, not `api-version`).
  return out.replace(/\bsk[-_][A-Za-z0-9_*-]{6,}|\b(?:key|api)[-_](?=[A-Za-z0-9_*-]*\d)[A-Za-z0-9_*-]{16,}/gi, '[redacted]')
}

/** A secret this long is a key, whose start or end is no word: its parts are cut out too. */
const SHORTEST_KEY = 16

/**
 * `text` without any start or end of the key `secret` of `SHORTEST_SECRET` characters or more,
 * longest first: a server quoting a key in part (`sk-proj-abc…wxyz`) gives away a short one almost
 * whole. A shorter secret (a password) is cut out whole only: its start may be a word (`changeme`).
 */
function withoutParts(text: string, secret: string): string {
  if (secret.length < SHORTEST_KEY) return text
  let out = text
  for (let length = secret.length - 1; length >= SHORTEST_SECRET; length--) {
    for (const piece of [secret.slice(0, length), secret.slice(-length)]) {
      if (out.includes(piece)) out = out.split(piece).join('[redacted]')
    }
  }
  return out
}

/**
 * The forms a server may echo `secret` in besides as it is: escaped inside a JSON string (`"` and
 * `\`, and `/` as `\/`, which PHP and some gateways write) and percent-encoded in a URL. A body is
 * redacted before it is parsed, so an escaped form left in would come out of the parse as the key.
 */
function echoedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1)
  return [...new Set([secret, json, json.replaceAll('/', '\\/'), encodeURIComponent(secret)])]
}

/**
 * What besides the key the adapter sends as a credential: the base URL's password and its Basic
 * token, and the values of headers named like secrets (`authorization`, `api-key`), each with the
 * token after a scheme word (`Bearer x` → `x`).
 */
export function sentSecrets(password: string | undefined, basicAuth: string | undefined, headers: Readonly<Record<string, string>>): string[] {
  const values = Object.entries(headers).filter(([name]) => isSecretName(name)).map(([, value]) => value)
  const all = [...(password ? [password] : []), ...(basicAuth ? [basicAuth] : []), ...values]
  return [...new Set(all.flatMap((value) => [value, value.replace(/^\S+\s+/, '')]))]
}
