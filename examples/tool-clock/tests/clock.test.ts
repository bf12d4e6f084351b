import { Context } from '@deepseek-ai/cordis'
import ToolRegistry from '@rein/tools'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as clock from '../src/index.ts'

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(new Date('2026-03-01T09:30:00Z'))
})
afterEach(() => {
  vi.useRealTimers()
})

async function boot(config: Partial<clock.Config> = {}) {
  const root = new Context()
  await root.plugin(ToolRegistry)
  const fiber = await root.plugin(clock, config)
  const run = (args: unknown) => root.tools.execute({
    callId: 'c1', name: 'current_time', arguments: JSON.stringify(args), signal: new AbortController().signal,
  })
  return { root, fiber, run }
}

describe('its Config', () => {
  it.each([
    ['a time zone that does not exist', { timeZone: 'Europe/Olso' }, 'timeZone "Europe/Olso" is not an IANA time zone'],
    ['a locale that is not a BCP 47 tag', { locale: 'en_US' }, 'locale "en_US" is not a BCP 47 language tag'],
  ])('refuses %s when the plugin loads, not at every call (the model is not to blame)', async (_case, config, words) => {
    const root = new Context()
    await root.plugin(ToolRegistry)
    const failure = await Promise.resolve(root.plugin(clock, config)).then(() => undefined, (error: unknown) => error)
    expect(failure).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(words) })
  })
})

describe('current_time', () => {
  it('tells the time in the configured zone by default', async () => {
    const { run } = await boot({ timeZone: 'Europe/Oslo' })
    expect(await run({})).toEqual({
      isError: false,
      value: {
        iso: '2026-03-01T09:30:00.000Z',
        local: 'Sunday, March 1, 2026 at 10:30:00 AM GMT+1',
        timeZone: 'Europe/Oslo',
        utcOffset: '+01:00',
      },
      content: [{ type: 'text', text: 'Sunday, March 1, 2026 at 10:30:00 AM GMT+1 (Europe/Oslo, UTC+01:00); ISO 2026-03-01T09:30:00.000Z' }],
    })
  })

  it('takes a zone from the model', async () => {
    const { run } = await boot()
    const result = await run({ timeZone: 'America/New_York' })
    expect(result.isError === false && result.value).toMatchObject({ timeZone: 'America/New_York', utcOffset: '-05:00' })
  })

  it('answers an unknown zone with an error the model can act on', async () => {
    const { run } = await boot()
    expect(await run({ timeZone: 'Mars/Olympus_Mons' })).toEqual({
      isError: true,
      error: { code: 'UNKNOWN_TIME_ZONE', message: '"Mars/Olympus_Mons" is not an IANA time zone; use a name such as "Europe/Oslo" or "America/New_York"' },
      content: [{ type: 'text', text: 'Error: "Mars/Olympus_Mons" is not an IANA time zone; use a name such as "Europe/Oslo" or "America/New_York"' }],
    })
  })

  it('rejects bad Config when the plugin loads', async () => {
    const root = new Context()
    await root.plugin(ToolRegistry)
    await expect((async () => { await root.plugin(clock, { timeZone: 7 as unknown as string }) })()).rejects.toThrow(/timeZone/)
  })

  it('takes its tool away when the plugin is disposed', async () => {
    const { root, fiber } = await boot()
    expect(root.tools.list()).toEqual(['current_time'])
    await fiber.dispose()
    expect(root.tools.list()).toEqual([])
  })
})
