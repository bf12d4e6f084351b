/** The base URL config field: checked when the config loads, so a typo fails at startup, not as retried requests. */

import { maskUrlPath, ReinError } from '@rein/base'

/** `value` if it is an http(s) URL; else `CONFIG_INVALID` naming the field, the value and the fix. */
export function checkBaseURL(value: string): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    // no scheme at all, or not a URL
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:')) {
    if (userInfo(url) === undefined) throw new ReinError('CONFIG_INVALID', 'baseURL has a user or password that is not valid percent-encoding; write a % in it as %25')
    if (/\/chat\/completions\/?$/.test(url.pathname)) {
      const root = value.replace(/\/chat\/completions\/?(?=[?#]|$)/, '')
      throw new ReinError('CONFIG_INVALID', `baseURL "${quoted(value)}" ends with /chat/completions, which rein adds to every request; write baseURL: ${quoted(root)}`)
    }
    return value
  }
  if (value.trim() === '') throw new ReinError('CONFIG_INVALID', 'baseURL is empty; set it to the server\'s API root, e.g. baseURL: http://localhost:8080/v1')
  const shown = quoted(value)
  if (url && value.includes('://')) {
    throw new ReinError('CONFIG_INVALID', `baseURL "${shown}" uses ${url.protocol}//; only http:// and https:// are spoken`)
  }
  const fixed = withScheme(value.trim())
  if (fixed) throw new ReinError('CONFIG_INVALID', `baseURL "${shown}" has no http:// or https:// scheme; write baseURL: ${quoted(fixed)}`)
  throw new ReinError('CONFIG_INVALID', `baseURL "${shown}" is not a URL; write the server's API root with its scheme, e.g. baseURL: http://localhost:8000/v1`)
}

/**
 * A base URL the error quotes, its keys as `***`: a password (`user:***@`, with a scheme or
 * without), every query value (a SAS `sig=` is named like no secret), a key in the path. The rest
 * stays (a user name and the query's names too), so the fix shown is still the one to write, the
 * keys put back in.
 */
function quoted(value: string): string {
  const password = value.replace(/^((?:[a-z][a-z\d+.-]*:\/\/)?[^/?#@:\s]*):[^/?#@\s]*@/i, '$1:***@')
  return maskQueryValues(maskUrlPath(password))
}

/** `text` with each value of its query as `***`, the names kept (`?sig=***`); a part without a name (`?<k>`) is all value. */
function maskQueryValues(text: string): string {
  const start = text.indexOf('?')
  if (start === -1) return text
  const end = text.indexOf('#', start) === -1 ? text.length : text.indexOf('#', start)
  const query = text.slice(start + 1, end).split('&').map((part) => (part === '' ? part : part.includes('=') ? `${part.slice(0, part.indexOf('='))}=***` : '***'))
  return `${text.slice(0, start + 1)}${query.join('&')}${text.slice(end)}`
}

/** A host name, an IPv4 address or a bracketed IPv6 one: what a scheme in front of it makes a URL of. */
const HOST_NAME = /^(?:[\p{L}\p{N}_.-]+|\[[0-9a-fA-F:.]+\])$/u

/**
 * Local hosts (localhost, IP addresses, names without a dot) rarely have TLS; everything else gets
 * https. `undefined` when a scheme would not make it a URL (a space in it, or a scheme already there
 * around a host that is not valid): the fix shown must be one that works.
 */
function withScheme(value: string): string | undefined {
  if (value.includes('://')) return undefined
  const host = value.replace(/^\/+/, '').replace(/^[^/?#@]*@/, '').split(/[/:?#]/, 1)[0] ?? ''
  // `${GATEWAY_URL}` or `$HOST`: a variable nothing substituted, which a scheme would not make a host.
  if (!HOST_NAME.test(host)) return undefined
  const local = host === 'localhost' || /^[\d.]+$/.test(host) || host.startsWith('[') || !host.includes('.') || host.endsWith('.local')
  const fixed = `${local ? 'http' : 'https'}://${value.replace(/^\/+/, '')}`
  return URL.canParse(fixed) && new URL(fixed).hostname !== '' ? fixed : undefined
}

/**
 * The user and password written into `url` (`user:password@`), decoded: `null` when it has none,
 * `undefined` when they are not valid percent-encoding.
 */
export function userInfo(url: URL): { user: string; password: string } | null | undefined {
  if (!url.username && !url.password) return null
  try {
    return { user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
  } catch {
    return undefined
  }
}
