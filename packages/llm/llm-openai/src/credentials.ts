/** API keys come from the environment by name; their values never appear in messages, logs or errors. */

import { LlmError } from '@rein/llm'

/** A header value an HTTP client can send: printable ASCII without spaces. */
const HEADER_SAFE = /^[\x21-\x7E]+$/

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

/** Removes a key, and anything shaped like one, from text a server sent back (some echo a masked key). */
export function redact(text: string, key: string | undefined): string {
  const withoutKey = key ? text.split(key).join('[redacted]') : text
  return withoutKey.replace(/\b(sk|key|api)[-_][A-Za-z0-9_*-]{6,}/gi, '[redacted]')
}
