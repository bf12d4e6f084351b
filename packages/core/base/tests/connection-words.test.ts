import { describe, expect, it } from 'vitest'
import { connectionWords, isTlsFailure } from '../src/index.ts'

/** Every code llm-openai and otel-http worded before they shared the table. */
const NETWORK = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']
const TLS = [
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]

describe('connection words', () => {
  it('words every code either package knew, the network ones as network failures and the TLS ones as TLS', () => {
    for (const code of NETWORK) expect({ code, words: connectionWords(code), tls: isTlsFailure(code) }).toEqual({ code, words: expect.any(String), tls: false })
    for (const code of TLS) expect({ code, words: connectionWords(code), tls: isTlsFailure(code) }).toEqual({ code, words: expect.any(String), tls: true })
  })

  it('says what failed in the same words for one code, in phrases that fit in a sentence (no code, no capital, no full stop)', () => {
    expect([connectionWords('ECONNREFUSED'), connectionWords('ENOTFOUND'), connectionWords('DEPTH_ZERO_SELF_SIGNED_CERT'), connectionWords('CERT_HAS_EXPIRED')])
      .toEqual(['connection refused', 'host not found', 'untrusted self-signed TLS certificate', 'expired TLS certificate'])
    for (const code of [...NETWORK, ...TLS]) {
      const words = connectionWords(code) ?? ''
      expect({ code, words, bad: /[A-Z_]{4,}|^[A-Z]|[.;]$/.test(words.replace('TLS', 'tls').replace('DNS', 'dns').replace('CA', 'ca')) }).toEqual({ code, words, bad: false })
    }
  })

  it('has no words for a code it does not know, nor for the names every object has', () => {
    expect(['ERR_INVALID_CHAR', 'constructor', 'toString', '__proto__', '', 'econnrefused'].map(connectionWords)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
  })

  it('takes a TLS code it has no words for as a TLS failure, by its prefix, and nothing else', () => {
    expect(['ERR_TLS_HANDSHAKE_TIMEOUT', 'ERR_SSL_DECRYPTION_FAILED', 'CERT_REVOKED', 'UNABLE_TO_GET_CRL'].filter(isTlsFailure)).toHaveLength(4)
    expect(['ERR_INVALID_CHAR', 'EADDRINUSE', 'HPE_INVALID_CONSTANT', 'constructor', ''].filter(isTlsFailure)).toEqual([])
  })
})
