// A URL in an error or a log line keeps its host and path, never a key: one put in the userinfo,
// the query, or a path segment (`/v1/key/<k>/`, `/sk-…/`), as gateways and collectors take them.
import { describe, expect, it } from 'vitest'
import { maskUrlPath, shownUrl, urlSecrets } from '../src/index.ts'

const SK = 'sk-live-abcdefghijklmnopqrstuvwxyz012345'
const PLAIN = 'Zq7plainPathSecret0123'

describe('a URL as a message shows it', () => {
  it.each([
    ['a key-shaped path segment', `https://gateway.example/v1/${SK}/chat`, 'https://gateway.example/v1/***/chat'],
    ['the segment after one named like a secret', `https://gateway.example/v1/key/${PLAIN}/`, 'https://gateway.example/v1/key/***/'],
    ['after api_key, apiKey, token, password', `http://c:4318/api_key/${PLAIN}/apiKey/a1/token/a2/password/a3/v1/traces`, 'http://c:4318/api_key/***/apiKey/***/token/***/password/***/v1/traces'],
    ['user, password, query and fragment', `https://user:${PLAIN}@h.example/v1?api_key=${PLAIN}#${PLAIN}`, 'https://h.example/v1'],
    ['a key-shaped host label', `https://${SK}.gw.example/v1`, 'https://***.gw.example/v1'],
  ])('hides %s, keeping the host and the rest of the path', (_case, given, shown) => {
    expect(shownUrl(new URL(given))).toBe(shown)
  })

  it.each([
    'https://api.openai.com/v1',
    'https://gw.example/openai/deployments/gpt-4o-2024-08-06/chat/completions',
    'https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/my-gateway/openai',
    'http://127.0.0.1:4318/v1/metrics',
    'https://gw.example/v1/keycloak/realm',
  ])('shows %s as it is: a model, deployment or account id is no key', (given) => {
    expect(shownUrl(new URL(given))).toBe(given)
  })
})

describe('a path in text', () => {
  it('masks segments in a URL written without a scheme, up to its query', () => {
    expect(maskUrlPath(`gateway.example/v1/key/${PLAIN}?x=1`)).toBe('gateway.example/v1/key/***?x=1')
    expect(maskUrlPath(`gateway.example/v1/${SK}/`)).toBe('gateway.example/v1/***/')
  })

  it('takes no host for a segment name: api-key.example.com/v1 keeps its v1', () => {
    expect(maskUrlPath('api-key.example.com/v1/chat')).toBe('api-key.example.com/v1/chat')
    expect(maskUrlPath('https://token.example/v1')).toBe('https://token.example/v1')
  })

  it('leaves a path without keys alone', () => {
    expect(maskUrlPath('/v1/chat/completions')).toBe('/v1/chat/completions')
    expect(maskUrlPath('/key/')).toBe('/key/')
  })
})

describe('the values a shown URL hides', () => {
  it('are its password, the keys in its path and the query values that may be keys, as written and decoded, longest first', () => {
    const url = new URL(`https://svc:p%40ss@gw.example/v1/key/${PLAIN}/${SK}/chat?api_key=${PLAIN}Q&sig=sv2024AbCdEf%2FGhIj%3D&flag&api-version=2024-06-01`)
    const secrets = urlSecrets(url)
    expect(new Set(secrets)).toEqual(new Set([SK, `${PLAIN}Q`, PLAIN, 'sv2024AbCdEf%2FGhIj%3D', 'sv2024AbCdEf/GhIj=', 'p%40ss', 'p@ss']))
    expect(secrets).toHaveLength(7)
    expect(secrets.map((secret) => secret.length)).toEqual(secrets.map((secret) => secret.length).sort((a, b) => b - a))
  })

  it('are none for a URL without keys, whose path stays shown', () => {
    expect(urlSecrets(new URL('https://gw.example/openai/deployments/gpt-4o/chat/completions'))).toEqual([])
  })

  it('keep a value that is not valid percent-encoding as written', () => {
    expect(urlSecrets(new URL('https://gw.example/v1?api_key=50%zz'))).toEqual(['50%zz'])
  })

  it('leave a short query value under a name no secret has, which a server quotes to say what it is about (Supported: 2024-10-21)', () => {
    expect(urlSecrets(new URL('https://res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21&format=openai&flag'))).toEqual([])
  })
})
