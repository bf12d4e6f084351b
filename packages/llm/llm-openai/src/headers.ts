/** Extra request headers, checked as the config loads: a header HTTP cannot carry would fail every request as a network error. */

import { validateHeaderName, validateHeaderValue } from 'node:http'
import { ReinError } from '@rein/base'

/** `headers` unchanged when HTTP can carry each; else `CONFIG_INVALID` naming the header, never its value (it may be a key). */
export function checkHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  for (const [name, value] of Object.entries(headers)) {
    if (!carries(() => validateHeaderName(name))) {
      throw new ReinError('CONFIG_INVALID', `headers: ${JSON.stringify(name)} is not a header name HTTP allows (letters, digits and !#$%&'*+-.^_\`|~, no spaces)`)
    }
    if (!carries(() => validateHeaderValue(name, value))) {
      throw new ReinError('CONFIG_INVALID', `headers: the value of ${name} holds a character HTTP cannot carry (a line break, or a character outside Latin-1); percent-encode it or leave the header out`)
    }
  }
  return { ...headers }
}

function carries(validate: () => void): boolean {
  try {
    validate()
    return true
  } catch {
    return false
  }
}
