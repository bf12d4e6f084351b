/** Which row provides a service, so a row that waits for one is told what to add or fix. */

import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import type { RowPlugin } from './row-plugin.ts'

/** rein's own services (each `declare module` Context service in packages/*) and their packages. */
const SERVICE_PACKAGES: ReadonlyMap<string, string> = new Map([
  ['llm', '@rein/llm'],
  ['tools', '@rein/tools'],
  ['sessions', '@rein/session'],
  ['agents', '@rein/agent'],
  ['checkpoints', '@rein/checkpoint'],
  ['jobs', '@rein/jobs'],
  ['memory', '@rein/memory'],
  ['subagents', '@rein/subagents'],
  ['telemetry', '@rein/telemetry'],
  ['shell', '@rein/tool-bash'],
])

/** The package to add for a rein service, e.g. `@rein/session` for `sessions`. */
export function packageFor(service: string): string | undefined {
  return SERVICE_PACKAGES.get(service)
}

/** True when the row's plugin declares `provide: service`, or it is the rein package for it. */
export function provides(row: EntryOptions, plugin: RowPlugin | undefined, service: string): boolean {
  return (plugin?.provide.includes(service) ?? false) || SERVICE_PACKAGES.get(service) === row.name
}
