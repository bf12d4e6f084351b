/**
 * The file ledger a summary ends with: every path the session's tool calls read, wrote or ran
 * commands against, up to the end of the summarized range — built from the log, never by the model.
 */

import { eventData, type SessionEvent } from '@rein/session'

/** Argument names that hold a path, as rein's tools and the common ones name them. */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'file', 'paths', 'workdir', 'cwd', 'dir', 'directory']
/** At most this many entries per kind; the rest are counted. */
const MAX_ENTRIES = 200
const MAX_COMMAND = 160

/** Effects a tool declares, by name (`ctx.tools.info(name)?.effects`). */
export type EffectsOf = (name: string) => readonly string[] | undefined

export function fileLedger(events: readonly SessionEvent[], toSeq: number, effectsOf: EffectsOf): string {
  const read = new Set<string>()
  const written = new Set<string>()
  const run = new Set<string>()
  for (const event of events) {
    if (event.seq > toSeq) break
    if (event.type !== 'tool/call') continue
    const { name, arguments: raw } = eventData(event, 'tool/call')
    const args = parse(raw)
    if (!args) continue
    const effects = effectsOf(name) ?? []
    const paths = pathsIn(args)
    if (effects.includes('exec')) {
      const command = typeof args.command === 'string' ? args.command : undefined
      if (command !== undefined) run.add(`\`${clip(command)}\`${paths.length > 0 ? ` (in ${paths.join(', ')})` : ''}`)
      else for (const path of paths) run.add(path)
    } else {
      for (const path of paths) (effects.includes('write') ? written : read).add(path)
    }
  }
  const lines = [['read', read], ['written', written], ['run', run]] as const
  const body = lines.filter(([, set]) => set.size > 0).map(([label, set]) => `- ${label}: ${listed(set)}`)
  return `## Files (from the session log)\n${body.length > 0 ? body.join('\n') : '- none'}`
}

function parse(raw: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(raw)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

function pathsIn(args: Record<string, unknown>): string[] {
  const paths: string[] = []
  for (const key of PATH_KEYS) {
    const value = args[key]
    if (typeof value === 'string' && value !== '') paths.push(value)
    else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string' && item !== '') paths.push(item)
  }
  return paths
}

function listed(set: ReadonlySet<string>): string {
  const items = [...set]
  const shown = items.slice(0, MAX_ENTRIES).join(', ')
  return items.length > MAX_ENTRIES ? `${shown} and ${items.length - MAX_ENTRIES} more` : shown
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > MAX_COMMAND ? `${line.slice(0, MAX_COMMAND - 1)}…` : line
}
