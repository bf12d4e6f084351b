/**
 * A URL as an error or a log line may show it. Keys travel in URLs too: a user and password, a
 * query (`?api_key=…`), or a path segment (`/v1/key/<k>/`, `/sk-…/`) for gateways and collectors
 * that take no header. The host and the rest of the path stay: they say where a request went.
 */

import { maskKeyShapes } from './key-shapes.ts'
import { isSecretName } from './secret-names.ts'

const MASK = '***'

/** A path segment and the one before it (the lookbehind), in a path or a URL written as text; a query or fragment ends it. */
const SEGMENT_AFTER = /(?<=\/([^/?#\s]+)\/)[^/?#\s]+/g

/**
 * `url` as scheme, host and path, never its user, password, query or fragment (which are still
 * sent), with what `maskUrlPath` masks in the path and a key-shaped host label (`sk-….gw.example`) as `***`.
 */
export function shownUrl(url: URL): string {
  return `${maskKeyShapes(`${url.protocol}//${url.host}`)}${maskUrlPath(url.pathname)}`
}

/**
 * `text` (a path, or a URL written as text) with each path segment shaped like a known kind of key,
 * and each one after a segment named like a secret (`/key/<k>`, `/api_key/<k>`, `/token/<t>`), as `***`.
 * A segment of any other kind stays, however random it looks: a deployment or an account id is no key.
 */
export function maskUrlPath(text: string): string {
  // A host is no segment name: `api-key.example.com/v1` keeps its `v1`.
  const authority = AUTHORITY.exec(text)?.[0] ?? ''
  const path = text.slice(authority.length).replace(SEGMENT_AFTER, (segment, before: string) => (isSecretName(before) ? MASK : segment))
  return maskKeyShapes(authority + path)
}

/** What comes before the path in a URL written as text (`https://host`, `host:8080`); nothing in a path. */
const AUTHORITY = /^(?:[a-z][a-z\d+.-]*:\/\/)?[^/?#\s]*/i

/**
 * The values in `url` that `shownUrl` hides and a server or collector may still quote back (a
 * `Cannot POST <path>?<query>` 404, a reason phrase, a redirect's location): its password, each path
 * segment `maskUrlPath` masks, and each query value that may be a key (see `queryValues`), each as
 * written and decoded; longest first, so one inside another is cut out whole.
 */
export function urlSecrets(url: URL): string[] {
  const written = [url.password, ...pathKeys(url.pathname), ...queryValues(url.search)].filter((value) => value !== '')
  const all = new Set(written.flatMap((value) => [value, decoded(value)]))
  return [...all].filter((value) => value !== '').sort((a, b) => b.length - a.length)
}

/** The segments of `path` that `maskUrlPath` masks, as written. */
function pathKeys(path: string): string[] {
  const given = path.split('/')
  const masked = maskUrlPath(path).split('/')
  // A mask never holds a `/`, so the segments line up; if a shape ever spanned one, each segment it changed counts.
  if (masked.length !== given.length) return given.filter((segment) => !masked.includes(segment))
  return given.filter((segment, index) => segment !== masked[index])
}

/**
 * The values of a query (`?a=1&b=2`) that may be keys, as written: one under a name like a secret's
 * (`api_key=`), and any other as long as a key (a SAS `sig=`, a bare `?<k>`). A short value under
 * another name (`api-version=2024-10-21`) stays: cut from a server's text, it would hide what the
 * text is about (`Supported: 2024-10-21`).
 */
function queryValues(search: string): string[] {
  return search.slice(1).split('&').flatMap((part) => {
    const value = queryKey(part)
    return value === undefined ? [] : [value]
  })
}

/** The value of one query part (`name=value`, or a bare `value`) when it may be a key (see `queryValues`). */
function queryKey(part: string): string | undefined {
  const at = part.indexOf('=')
  const value = part.slice(at + 1)
  return (at > 0 && isSecretName(decoded(part.slice(0, at)))) || value.length >= KEY_LENGTH || maskKeyShapes(value) !== value ? value : undefined
}

/**
 * A URL written in a text (config, a message), kept whole but for what `urlSecrets` names: what
 * `maskUrlPath` masks in its path, and each query value that may be a key, as `***`. Its user and
 * password are `maskText`'s.
 */
export function maskUrlText(written: string): string {
  const end = written.search(/[?#]/)
  if (end < 0) return maskUrlPath(written)
  const hash = written.indexOf('#', end)
  const query = written.slice(end, hash < 0 ? undefined : hash)
  // A fragment can carry a token too (`#access_token=…`, an OAuth redirect's): its parts are read as a query's.
  return `${maskUrlPath(written.slice(0, end))}${maskParts(query)}${hash < 0 ? '' : maskParts(written.slice(hash))}`
}

/** `?a=1&b=2` or `#a=1`, each value that may be a key as `***`. */
function maskParts(text: string): string {
  if (text.length <= 1) return text
  return text[0] + text.slice(1).split('&').map((part) => {
    const value = queryKey(part)
    return value === undefined || value === '' ? part : `${part.slice(0, part.length - value.length)}${MASK}`
  }).join('&')
}

/** A query value this long, under any name, is taken for a key. */
const KEY_LENGTH = 16

/** `value` percent-decoded (`+` as a space, as a query reads it); as it is when it is not valid percent-encoding. */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '))
  } catch {
    return value
  }
}
