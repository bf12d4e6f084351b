/**
 * Plain words for the codes Node gives a connection that could not be made or was lost, TLS
 * failures among them: one table, so a provider and an exporter word the same failure alike. Each
 * caller builds its own sentence around them and adds its own hint (what to check in its config).
 */

/** Words for one code, and whether it is a TLS or certificate failure (not the network's). */
interface Entry {
  readonly words: string
  readonly tls: boolean
}

const network = (words: string): Entry => ({ words, tls: false })
const tls = (words: string): Entry => ({ words, tls: true })

/**
 * Noun phrases, so they fit "could not reach X: <words> at <url>" and "export failed: <words>"
 * alike. A Map: an object's `constructor` or `toString` is no code.
 */
const ENTRIES = new Map<string, Entry>([
  ['ECONNREFUSED', network('connection refused')],
  ['ENOTFOUND', network('host not found')],
  // getaddrinfo's "temporary failure in name resolution": DNS did not answer, the name may well exist.
  ['EAI_AGAIN', network('temporary DNS failure')],
  ['ECONNRESET', network('connection reset')],
  ['EPIPE', network('connection closed')],
  ['ETIMEDOUT', network('connection timed out')],
  ['EHOSTUNREACH', network('host unreachable')],
  ['ENETUNREACH', network('network unreachable')],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', tls('untrusted self-signed TLS certificate')],
  ['SELF_SIGNED_CERT_IN_CHAIN', tls('TLS certificate from an untrusted self-signed CA')],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', tls('TLS certificate from an unknown CA')],
  ['UNABLE_TO_GET_ISSUER_CERT', tls('TLS certificate from an unknown CA')],
  ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', tls('TLS certificate from an unknown CA')],
  ['CERT_HAS_EXPIRED', tls('expired TLS certificate')],
  ['CERT_NOT_YET_VALID', tls('TLS certificate not valid yet')],
  ['ERR_TLS_CERT_ALTNAME_INVALID', tls('TLS certificate for another host name')],
  ['EPROTO', tls('TLS handshake failed')],
  // OpenSSL's "wrong version number": the first bytes back were no TLS record, a plain-HTTP server's.
  ['ERR_SSL_WRONG_VERSION_NUMBER', tls('no TLS on the server')],
])

/** Codes of TLS failures the table does not word: Node's `ERR_TLS_*`, OpenSSL's `ERR_SSL_*`, X509's `CERT_*` and `UNABLE_TO_*`. */
const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_)/

/** Plain words for a connection or TLS error code (`ECONNREFUSED` → "connection refused"), or undefined for a code without any. */
export function connectionWords(code: string): string | undefined {
  return ENTRIES.get(code)?.words
}

/** Whether `code` is a TLS or certificate failure: not one to look for in the network. */
export function isTlsFailure(code: string): boolean {
  return ENTRIES.get(code)?.tls ?? TLS_CODE.test(code)
}
