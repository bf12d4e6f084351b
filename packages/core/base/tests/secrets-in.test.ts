import { describe, expect, it } from 'vitest'
import { maskText, secretsIn } from '../src/index.ts'

describe('secretsIn', () => {
  it('finds the text and numbers under secret-named keys and headers, at any depth, longest first', () => {
    const config = {
      apiKey: 'pk-live-9f8e7d6c5b4a3210',
      model: 'gpt-x',
      providers: [{ token: 12345678901234, name: 'a' }],
      headers: { 'x-team': 'team-secret-value', Accept: 'json' },
    }
    expect(secretsIn(config)).toEqual(['pk-live-9f8e7d6c5b4a3210', 'team-secret-value', '12345678901234', 'json'])
  })

  it('takes everything inside a secret-named object, and nothing outside one', () => {
    expect(secretsIn({ credentials: { user: 'me', pass: ['p1'] }, port: 8080, enabled: true })).toEqual(['me', 'p1'])
  })

  it('ends at a cycle and still walks an object shared under a secret-named key', () => {
    const shared: Record<string, unknown> = { value: 'shared-value' }
    shared.self = shared
    expect(secretsIn({ plain: shared, secret: shared })).toEqual(['shared-value'])
  })

  it('masks what a schema message quotes of a key written in the file', () => {
    const config = { provider: { kind: 'c', token: 'pk-live-9f8e7d6c5b4a3210' } }
    const message = `config.provider: expected string but got ${JSON.stringify(config.provider)}`
    expect(maskText(message, secretsIn(config))).toBe('config.provider: expected string but got {"kind":"c","token":"***"}')
  })
})

describe('maskText on a query value another layer already hid', () => {
  it('masks a bracketed value whole, leaving no stray bracket behind', () => {
    expect(maskText('bad request to /v1/chat/completions?api_key=[redacted] (HTTP 400)', [])).toBe('bad request to /v1/chat/completions?api_key=*** (HTTP 400)')
    expect(maskText('see https://h.example/x?token=abc123] now', [])).toBe('see https://h.example/x?token=***] now')
  })
})
