// What the adapter cuts out of a server's words: the credentials it sent, whole, escaped, or in
// part, and text shaped like a key; not the words a server uses to name its parameters.
import { describe, expect, it } from 'vitest'
import { redact } from '../src/credentials.ts'

describe('redact', () => {
  it.each([
    ['an Azure version parameter', 'unsupported ?api-version=2024-10-21; use api_version=2024-06-01', 'unsupported ?api-version=2024-10-21; use api_version=2024-06-01'],
    ['a header name', 'missing header x-api-version or x-api-key', 'missing header x-api-version or x-api-key'],
    ['a parameter named like a key', 'send key_id and api_base', 'send key_id and api_base'],
  ])('keeps %s', (_what, text, kept) => {
    expect(redact(text, [])).toBe(kept)
  })

  it.each([
    ['an OpenAI key', 'Incorrect API key provided: sk-proj-abcdef0123456789XYZ.', 'Incorrect API key provided: [redacted].'],
    ['a key-prefixed token', 'token key-9f8e7d6c5b4a39281706 is revoked', 'token [redacted] is revoked'],
  ])('cuts %s out, shaped like a key', (_what, text, cut) => {
    expect(redact(text, [])).toBe(cut)
  })

  it('cuts out the starts and ends of a sent key that a server quotes in part, so the parts cannot be put together', () => {
    const secret = 'plainsecretvalue'
    expect(redact(`bad key part=${secret.slice(0, 12)}...${secret.slice(-4)}`, [secret])).toBe('bad key part=[redacted]...alue')
    expect(redact(`key ending ${secret.slice(-10)} refused`, [secret])).toBe('key ending [redacted] refused')
    expect(redact(`first ${secret.slice(0, 14)}, then ${secret.slice(0, 9)}; ${secret.slice(0, 7)} + ${secret.slice(-7)}`, [secret])).toBe('first [redacted], then [redacted]; [redacted] + [redacted]')
    expect(redact(`echoed ${encodeURIComponent('pl@in/secret+value').slice(0, 12)}`, ['pl@in/secret+value'])).toBe('echoed [redacted]')
    expect(redact('the plain word plain stays', [secret])).toBe('the plain word plain stays')
  })

  it('cuts a password out whole only, not the words it starts with', () => {
    expect(redact('standalone: change the hunter config; changeme was refused', ['standard1', 'hunter22', 'changeme'])).toBe('standalone: change the hunter config; [redacted] was refused')
  })
})
