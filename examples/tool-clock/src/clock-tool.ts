/** The `current_time` tool: what a model cannot know on its own — the date and time right now. */

import { ReinError, defineTool } from '@rein/tools'

export interface ClockOptions {
  /** IANA zone used when the model names none. */
  timeZone: string
  /** BCP 47 locale for the human-readable line. */
  locale: string
}

export function createClockTool(options: ClockOptions) {
  return defineTool({
    name: 'current_time',
    description: 'Returns the current date and time. Call it whenever an answer depends on today\'s date or the time of day: you have no clock of your own.',
    parameters: {
      timeZone: { type: 'string', description: `IANA time zone such as "Europe/Oslo". Default: ${options.timeZone}.` },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          iso: { type: 'string', required: true, description: 'UTC instant, ISO 8601' },
          local: { type: 'string', required: true, description: 'wall-clock time in the zone' },
          timeZone: { type: 'string', required: true },
          utcOffset: { type: 'string', required: true },
        },
      },
      render: (_args, value) => `${value.local} (${value.timeZone}, UTC${value.utcOffset}); ISO ${value.iso}`,
    },
    execute: (args) => {
      const timeZone = args.timeZone ?? options.timeZone
      const now = new Date()
      return {
        iso: now.toISOString(),
        local: format(now, timeZone, options.locale, { dateStyle: 'full', timeStyle: 'long' }),
        timeZone,
        utcOffset: format(now, timeZone, 'en-US', { timeZoneName: 'longOffset' }).replace(/^.*GMT/, '') || '+00:00',
      }
    },
    isConcurrencySafe: true,
    replaySafe: true,
    presentCall: (args) => ({ card: 'generic', title: 'Check the time', detail: args.timeZone ?? options.timeZone }),
  })
}

function format(date: Date, timeZone: string, locale: string, style: Intl.DateTimeFormatOptions): string {
  try {
    return new Intl.DateTimeFormat(locale, { ...style, timeZone }).format(date)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    throw new ReinError('UNKNOWN_TIME_ZONE', `"${timeZone}" is not an IANA time zone; use a name such as "Europe/Oslo" or "America/New_York"`, { cause: error })
  }
}

/** `timeZone` when Intl knows it; else `CONFIG_INVALID` naming it. */
export function checkTimeZone(timeZone: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return timeZone
  } catch {
    throw new ReinError('CONFIG_INVALID', `timeZone "${timeZone}" is not an IANA time zone; use a name such as "Europe/Oslo" or "America/New_York"`)
  }
}

/** `locale` when it is a well-formed BCP 47 tag; else `CONFIG_INVALID` naming it. */
export function checkLocale(locale: string): string {
  try {
    Intl.getCanonicalLocales(locale)
    return locale
  } catch {
    throw new ReinError('CONFIG_INVALID', `locale "${locale}" is not a BCP 47 language tag; use one such as "en-US" or "nb-NO" (a hyphen, not "_")`)
  }
}
