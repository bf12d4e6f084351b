// Found by the audit (t02-retry-after): a negative or malformed Retry-After meant "retry at once",
// skipping the backoff: `-5` read as the year -5 (long past), `1, 2` and an empty `retry-after-ms`
// as 0; `5e2` and `0x10` were read as numbers. Only RFC 9110's forms are honoured now, and the
// `UTC` / `+0000` zones servers write in place of IMF-fixdate's `GMT` (which were ignored).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseRetryAfter } from '../src/index.ts'
import { boot, closeServers, KEY, run } from './harness.ts'

beforeEach(() => {
  process.env.REIN_TEST_OPENAI_KEY = KEY
})
afterEach(async () => {
  await closeServers()
  delete process.env.REIN_TEST_OPENAI_KEY
})

const now = Date.parse('2026-01-01T00:00:00Z')
const parse = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now)

describe('a Retry-After that is not a delay or an HTTP date', () => {
  it.each([
    '-5', '-1', '-0.5', '1, 2', '5e2', '1e3', '0x10', '+3', '1.', '.5', '1,5', 'Infinity', 'NaN', '', ' ', 'soon', '3 seconds',
    // Dates Date.parse would take, but not in an HTTP-date's form.
    '2026-01-01T00:00:05Z', '2026-01-01', '01 Jan 2026 00:00:05 GMT', 'Jan 1 2026', 'Thu, 1 Jan 2026 00:00:05 GMT', 'thu, 01 jan 2026 00:00:05 gmt',
    // Without a zone it would be local time, which the server cannot mean: ambiguous, so ignored.
    'Thu, 01 Jan 2026 00:00:05', 'Thursday, 01-Jan-26 00:00:05',
    // A zone other than GMT, UTC or +0000 (`-0000` is RFC 5322's "local time unknown"), or one a form does not take.
    'Thu, 01 Jan 2026 00:00:05 +0100', 'Thu, 01 Jan 2026 00:00:05 -0000', 'Thu, 01 Jan 2026 00:00:05 +00:00', 'Thu, 01 Jan 2026 00:00:05 UT',
    'Thu, 01 Jan 2026 00:00:05 Z', 'Thu, 01 Jan 2026 00:00:05 utc', 'Thu, 01 Jan 2026 00:00:05 EST', 'Thursday, 01-Jan-26 00:00:05 UTC',
    'Thu Jan  1 00:00:05 2026 GMT',
    // The obsolete forms bent: asctime's day not padded, RFC 850 with a four-digit year or a short day name.
    'Thu Jan 1 00:00:05 2026', 'Thursday, 01-Jan-2026 00:00:05 GMT', 'Thu, 01-Jan-26 00:00:05 GMT',
    // HTTP-date's form, impossible values.
    'Thu, 32 Jan 2026 00:00:05 GMT', 'Sat, 31 Feb 2026 00:00:05 GMT', 'Thu, 01 Jan 2026 24:00:00 GMT', 'Thu, 01 Jan 2026 00:60:00 GMT',
    'Thu, 01 Foo 2026 00:00:05 GMT', 'Thu, 00 Jan 2026 00:00:05 GMT',
  ])('is ignored, so the backoff applies: %j', (value) => {
    expect(parse({ 'retry-after': value })).toBeUndefined()
  })

  it.each(['', ' ', '-1', '-0', 'abc', '1e3', '0x10', '1, 2', 'Thu, 01 Jan 2026 00:00:05 GMT'])('is ignored in retry-after-ms: %j', (value) => {
    expect(parse({ 'retry-after-ms': value })).toBeUndefined()
  })

  it.each([['retry-after', '9'.repeat(400)], ['retry-after-ms', '9'.repeat(400)]])('is ignored when %s has more digits than a number holds', (name, value) => {
    expect(parse({ [name]: value })).toBeUndefined()
  })

  it('leaves a malformed retry-after-ms for a retry-after that is well formed', () => {
    expect(parse({ 'retry-after-ms': '', 'retry-after': '3' })).toBe(3000)
    expect(parse({ 'retry-after-ms': '-5', 'retry-after': '-5' })).toBeUndefined()
  })
})

describe('a Retry-After in one of its forms', () => {
  it.each([
    ['0', 0],
    ['2', 2000],
    ['1.5', 1500],
    ['1.1', 1100],
    ['007', 7000],
    ['999999', 999_999_000],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5000],
    ['Thursday, 01-Jan-26 00:00:05 GMT', 5000],
    ['Thu Jan  1 00:00:05 2026', 5000],
    ['Fri, 02 Jan 2026 00:00:00 GMT', 86_400_000],
    ['Wed, 31 Dec 2025 23:59:00 GMT', 0],
    ['Sun, 06 Nov 1994 08:49:37 GMT', 0],
  ])('is honoured: %j is %i ms', (value, ms) => {
    expect(parse({ 'retry-after': value })).toBe(ms)
  })

  // RFC 9110 5.6.7: IMF-fixdate, and the obsolete RFC 850 and asctime forms recipients MUST accept.
  it.each([
    ['IMF-fixdate', 'Sat, 31 Jan 2026 23:59:59 GMT', 'Wed, 21 Oct 2015 07:28:00 GMT'],
    ['RFC 850', 'Saturday, 31-Jan-26 23:59:59 GMT', 'Wednesday, 21-Oct-15 07:28:00 GMT'],
    ['asctime', 'Sat Jan 31 23:59:59 2026', 'Wed Oct 21 07:28:00 2015'],
  ])('is honoured in the %s form, ahead as its wait and past as 0', (_form, ahead, past) => {
    expect(parse({ 'retry-after': ahead })).toBe(Date.parse('2026-01-31T23:59:59Z') - now)
    expect(parse({ 'retry-after': past })).toBe(0)
  })

  it.each(['GMT', 'UTC', '+0000'])('is honoured as an IMF-fixdate whose zone is written %s, not ignored', (zone) => {
    expect(parse({ 'retry-after': `Thu, 01 Jan 2026 00:00:05 ${zone}` })).toBe(5000)
    expect(parse({ 'retry-after': `Wed, 21 Oct 2015 07:28:00 ${zone}` })).toBe(0)
  })

  it.each([['1500', 1500], ['0', 0], ['2.5', 3]])('is honoured in retry-after-ms, which wins: %j', (value, ms) => {
    expect(parse({ 'retry-after-ms': value, 'retry-after': '9' })).toBe(ms)
  })

  it('reads a two-digit year more than 50 years ahead as the century before (RFC 9110, 5.6.7)', () => {
    expect(parse({ 'retry-after': 'Friday, 01-Jan-99 00:00:00 GMT' })).toBe(0)
  })
})

describe('the runtime given a malformed Retry-After', () => {
  it.each([
    [{ 'retry-after': '-5' }],
    [{ 'retry-after': '1, 2' }],
    [{ 'retry-after-ms': '' }],
    [{ 'retry-after': '0x10' }],
  ])('waits its own backoff, not 0 ms nor the misread delay: %j', async (headers) => {
    const { root } = await boot(
      [{ kind: 'error', status: 429, message: 'slow down', type: 'rate_limit', headers }, { steps: [{ text: 'ok' }] }],
      {},
      { retry: { maxRetries: 1, initialDelayMs: 30, maxDelayMs: 30, jitter: 0, retryAfterCapMs: 60_000 } },
    )
    const { events, finish } = await run(root)
    expect(finish.reason).toBe('stop')
    const retry = events.find((event) => event.type === 'retry')
    expect(retry).toMatchObject({ delayMs: 30, failure: { code: 'RATE_LIMIT' } })
    expect(retry?.type === 'retry' && retry.failure).not.toHaveProperty('retryAfterMs')
  })
})

describe('the runtime given a Retry-After date in UTC or +0000', () => {
  it.each(['UTC', '+0000'])('waits what the %s date asks (up to its cap), not its own backoff', async (zone) => {
    const inAMinute = new Date(Date.now() + 60_000).toUTCString().replace('GMT', zone)
    const { root } = await boot(
      [{ kind: 'error', status: 429, message: 'slow down', type: 'rate_limit', headers: { 'retry-after': inAMinute } }, { steps: [{ text: 'ok' }] }],
      {},
      { retry: { maxRetries: 1, initialDelayMs: 30, maxDelayMs: 30, jitter: 0, retryAfterCapMs: 5 } },
    )
    const { events, finish } = await run(root)
    expect(finish.reason).toBe('stop')
    const retry = events.find((event) => event.type === 'retry')
    expect(retry).toMatchObject({ delayMs: 5, failure: { code: 'RATE_LIMIT', retryAfterMs: expect.any(Number) } })
    const asked = retry?.type === 'retry' ? retry.failure.retryAfterMs ?? 0 : 0
    expect(asked).toBeGreaterThan(50_000)
    expect(asked).toBeLessThanOrEqual(60_000)
  })
})
