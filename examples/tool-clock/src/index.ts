/**
 * rein-tool-clock: a third-party tool package for rein. Load it by name from a cordis.yml next to
 * `@rein/tools`; it registers one tool, `current_time`.
 */

import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { checkLocale, checkTimeZone, createClockTool, type ClockOptions } from './clock-tool.ts'

export const name = 'rein-tool-clock'
export const inject = ['tools']

export type Config = ClockOptions
// Checked as the config loads: a bad value is the user's to fix, not the model's at every call.
export const Config: Schema<Partial<Config>, Config> = Schema.object({
  timeZone: Schema.transform(Schema.string(), checkTimeZone).default('UTC').description('IANA zone used when the model names none.'),
  locale: Schema.transform(Schema.string(), checkLocale).default('en-US').description('BCP 47 locale for the readable time.'),
})

export const apply = (ctx: Context, config: Config) => {
  ctx.tools.register(createClockTool(config))
}

export { createClockTool, type ClockOptions }
