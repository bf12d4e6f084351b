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
