import { describe, expect, it } from 'vitest'
import { contentMasker } from '../src/secrets.ts'

describe('the keys masked out of exported content', () => {
  const headers = {
    'x-scope-orgid': 'acme-production',
    'content-type': 'application/json',
    'x-honeycomb-team': 'hc7f3a9c2b1d4e5f60718293',
    authorization: 'Bearer abcDEF1234567890xyz',
  }
  const text = 'org acme-production sends application/json with team hc7f3a9c2b1d4e5f60718293 and token abcDEF1234567890xyz'

  it('leaves the values of collector headers that are no credential (an org id, a content type) as the content says them', () => {
    expect(contentMasker({}, headers)(text)).toBe('org acme-production sends application/json with team *** and token ***')
  })

  it('reads the OTLP header variables by the same rule', () => {
    const env = { OTEL_EXPORTER_OTLP_HEADERS: Object.entries(headers).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join(',') }
    expect(contentMasker(env, {})(text)).toBe('org acme-production sends application/json with team *** and token ***')
  })

  it('masks a header whose name says it holds a secret, whatever its value looks like', () => {
    expect(contentMasker({}, { 'x-api-key': 'plain words key' })('the key is plain words key')).toBe('the key is ***')
  })
  it('masks a value with an auth scheme under any header name, however plain its token', () => {
    const masker = contentMasker({}, { 'x-custom-auth': 'Bearer abcdefghijklmnopqrstu' })
    expect(masker('sent abcdefghijklmnopqrstu')).toBe('sent ***')
  })

  it('masks a header credential\'s body quoted without its kind prefix, as the environment\'s keys are', () => {
    const masker = contentMasker({}, { authorization: 'Bearer glc_Zq81kLmN0pQrStUv27Wx' })
    expect(masker('the token ended Zq81kLmN0pQrStUv27Wx')).toBe('the token ended ***')
  })
})
