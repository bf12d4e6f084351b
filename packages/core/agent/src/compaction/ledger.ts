/**
 * The file ledger a summary ends with: every path the session's tool calls read, wrote or ran
 * commands against, up to the end of the summarized range — built from the log, never by the model.
 */

import { eventData, type SessionEvent } from '@rein/session'
import { shorten } from '@rein/base'

/** Argument names that hold a path, as rein's tools and the common ones name them. */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'file', 'paths', 'workdir', 'cwd', 'dir', 'directory']
/** Entries listed per kind, fewer until the ledger fits its size; the rest are counted. */
const LISTED = [200, 50, 20, 5]
const MAX_COMMAND = 160
/** Longer is no path a system takes (Linux's PATH_MAX): what the model sent there is not listed. */
const MAX_PATH_CHARS = 4096
/** Results that say the call's body never ran: such a call touched nothing. */
const NOT_RUN = new Set(['DENIED', 'TOOL_NOT_STARTED', 'ABORTED_BEFORE_DISPATCH', 'UNKNOWN_TOOL', 'INVALID_ARGS', 'BUDGET_EXCEEDED'])

/** Effects a tool declares, by name (`ctx.tools.info(name)?.effects`). */
export type EffectsOf = (name: string) => readonly string[] | undefined

/** `maxChars`: the ledger's size at most; past it each kind lists fewer entries. */
export function fileLedger(events: readonly SessionEvent[], toSeq: number, effectsOf: EffectsOf, maxChars: number): string {
  const read = new Set<string>()
  const written = new Set<string>()
  const run = new Set<string>()
  const notRun = new Set<string>()
  for (const event of events) {
    if (event.type !== 'tool/result') continue
    const result = eventData(event, 'tool/result')
    if (result.isError && result.code !== undefined && NOT_RUN.has(result.code)) notRun.add(result.callId)
  }
  for (const event of events) {
    if (event.seq > toSeq) break
    if (event.type !== 'tool/call') continue
    const { name, callId, arguments: raw } = eventData(event, 'tool/call')
    if (notRun.has(callId)) continue
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
  const kinds = ([['read', read], ['written', written], ['run', run]] as const).filter(([, set]) => set.size > 0)
  if (kinds.length === 0) return `${LEDGER_HEADING}\n- none`
  const text = fewerToFit(LISTED, maxChars, (most) => `${LEDGER_HEADING}\n${kinds.map(([label, set]) => `- ${label}: ${listed(set, most)}`).join('\n')}`)
  // A few long paths can still be more than its size: the ledger never makes a summary longer than that.
  return shorten(text, maxChars)
}

/** Results a summary's recall note names at most, the latest first; the rest are counted. */
const RECALLABLE = [40, 20, 10, 5, 2]

/**
 * What a summary that folds in tool results says of them, after its ledger (a later summary drops
 * it with the ledger and writes its own): recall_result shows one again by its call id, and the
 * latest results up to `toSeq` that ran are named with theirs — the stubs that named them go with the range.
 */
export function recallNote(events: readonly SessionEvent[], toSeq: number, maxChars: number): string {
  const names = new Map<string, string>()
  const results: string[] = []
  for (const event of events) {
    if (event.seq > toSeq) break
    if (event.type === 'tool/call') names.set(eventData(event, 'tool/call').callId, eventData(event, 'tool/call').name)
    if (event.type !== 'tool/result') continue
    const { callId, content, code } = eventData(event, 'tool/result')
    const name = names.get(callId)
    if (name === undefined || (code !== undefined && NOT_RUN.has(code))) continue
    const chars = content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0)
    results.push(`${callId} (${clip(name)}, ${chars.toLocaleString('en-US')} characters)`)
  }
  const opening = '(Tool results summarized here are not shown again; recall_result shows one by its call id'
  if (results.length === 0) return `${opening}.)`
  const text = fewerToFit(RECALLABLE, maxChars, (most) => `${opening}, the latest first: ${results.slice(-most).reverse().join(', ')}${results.length > most ? `, and ${results.length - most} earlier` : ''}.)`)
  // A small window: the note would make the summary too long to be worth it.
  return text.length <= maxChars ? text : `${opening}.)`
}

/** `make(most)` for the first of `counts` (largest first) whose text fits in `maxChars`, else for the last. */
function fewerToFit(counts: readonly number[], maxChars: number, make: (most: number) => string): string {
  let text = ''
  for (const most of counts) {
    text = make(most)
    if (text.length <= maxChars) break
  }
  return text
}

/** How the ledger opens: a later compaction finds (and rebuilds) it by this line. */
const LEDGER_HEADING = '## Files (from the session log)'

/**
 * `text` without its ledger sections: each from its heading to the next Markdown heading. The ledger
 * is rebuilt from the log each time, so a copy the model wrote (or an earlier summary's) goes, but
 * the model's own sections around it stay, wherever it put the copy.
 */
export function withoutLedger(text: string): string {
  const kept: string[] = []
  let inLedger = false
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith(LEDGER_HEADING)) inLedger = true
    else if (inLedger && /^#{1,6}\s/.test(line)) inLedger = false
    if (!inLedger) kept.push(line)
  }
  return kept.join('\n').trim()
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
    if (isPath(value)) paths.push(value)
    else if (Array.isArray(value)) for (const item of value) if (isPath(item)) paths.push(item)
  }
  return paths
}

function isPath(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_PATH_CHARS
}

/** The most recent `most` entries (the later ones matter more), and how many more there were. */
function listed(set: ReadonlySet<string>, most: number): string {
  const items = [...set]
  const shown = items.slice(-most).join(', ')
  return items.length > most ? `${items.length - most} earlier and ${shown}` : shown
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return shorten(line, MAX_COMMAND)
}
