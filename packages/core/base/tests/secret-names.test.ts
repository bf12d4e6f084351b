import { describe, expect, it } from 'vitest'
import { isSecretName, maskSecrets, maskText, secretEnvironment, secretValues } from '../src/index.ts'

describe('cookie names', () => {
  it('masks a thrown object\'s top-level cookie, Cookie and set-cookie fields', () => {
    const thrown = { message: 'HTTP 401', cookie: 'sid=abc123', Cookie: 'sid=def456', 'set-cookie': ['sid=ghi789; HttpOnly'], setCookie: 'sid=jkl' }
    expect(maskSecrets(thrown, [])).toEqual({ message: 'HTTP 401', cookie: '***', Cookie: '***', 'set-cookie': ['***'], setCookie: '***' })
  })

  it('counts a name whose last word is cookie(s), as the other secret words count: what the name holds is a cookie', () => {
    for (const name of ['cookie', 'Cookie', 'COOKIE', 'set-cookie', 'Set-Cookie', 'cookies', 'sessionCookie', 'auth_cookie', 'HTTP_COOKIE']) expect([name, isSecretName(name)]).toEqual([name, true])
  })

  it('does not count a cookie setting, whose name ends in what it holds (a flag, a domain, a path)', () => {
    for (const name of ['cookies_enabled', 'cookieDomain', 'COOKIE_PATH', 'cookieMaxAge', 'cookieJarPath']) expect([name, isSecretName(name)]).toEqual([name, false])
    expect(maskSecrets({ cookies_enabled: true, cookieDomain: 'example.com' }, [])).toEqual({ cookies_enabled: true, cookieDomain: 'example.com' })
  })

  it('keeps a cookie secret\'s variable secret, and adds the variables that hold a cookie', () => {
    const env = { COOKIE_SECRET: 'cs-1234567890', HTTP_COOKIE: 'sid=abc123', COOKIE_DOMAIN: 'example.com', HOME: '/home/u' }
    expect(secretEnvironment(env).map(({ name }) => name)).toEqual(['COOKIE_SECRET', 'HTTP_COOKIE'])
  })

  it('still leaves session names alone: rein shows its own session ids', () => {
    expect(['session', 'sessionId', 'SESSION_DIR'].filter(isSecretName)).toEqual([])
    expect(isSecretName('sessionToken')).toBe(true)
  })
})

describe('maskSecrets and text shaped like a key', () => {
  it('masks a key under a key not named like a secret (a system prompt, a note), as the tool lines do', () => {
    const sk = `sk-live-${'a1B2'.repeat(6)}`
    const slack = `xoxb-${'1234567890'.repeat(2)}`
    expect(maskSecrets({ system: `use ${sk} for it`, note: [slack], port: 8080 }, [])).toEqual({ system: 'use *** for it', note: ['***'], port: 8080 })
  })
})

describe('isSecretName, passwords by other names', () => {
  it('takes pass and passphrase for secrets, and not PWD (the working directory) or a word that only starts with pass', () => {
    for (const name of ['pass', 'DB_PASS', 'smtpPass', 'passphrase', 'SSH_PASSPHRASE', 'keyPassphrase']) expect([name, isSecretName(name)]).toEqual([name, true])
    for (const name of ['PWD', 'OLDPWD', 'passThrough', 'bypass', 'passes']) expect([name, isSecretName(name)]).toEqual([name, false])
  })
})

describe('isSecretName, short names for a password', () => {
  it('takes pw as the last word for a password (DB_PW, dbPw), and not pwd, which names working directories (PWD, HOST_PWD)', () => {
    for (const name of ['DB_PW', 'dbPw', 'pw']) expect([name, isSecretName(name)]).toEqual([name, true])
    for (const name of ['PWD', 'OLDPWD', 'HOST_PWD', 'ORIGINAL_PWD', 'pwdDir', 'PW_LENGTH']) expect([name, isSecretName(name)]).toEqual([name, false])
  })
})

describe('secretValues', () => {
  it('masks a secret\'s body without its kind prefix (sk-proj-, ghp_), which a message may quote alone', () => {
    const body = 'AbCdEf0123456789xyzQRS'
    const secrets = secretValues({ OPENAI_API_KEY: `sk-proj-${body}`, GITHUB_TOKEN: `ghp_${body}Z9` })
    expect(maskText(`the key was ${body}, then ${body}Z9`, secrets)).toBe('the key was ***, then ***')
    expect(maskText(`whole: sk-proj-${body}`, secrets)).toBe('whole: ***')
  })

  it('adds no body shorter than 16 characters: a short one may be an ordinary word', () => {
    expect(secretValues({ API_KEY: 'sk-password1' })).toEqual(['sk-password1'])
  })
})
