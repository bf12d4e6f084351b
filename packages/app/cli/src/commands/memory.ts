/**
 * `rein memory list|search|forget|export`: what the agent remembers (`ctx.memory`), shown so a
 * person can see it and fix it. Reads and deletes entries; never writes one.
 */

import type { Context } from '@deepseek-ai/cordis'
import { ReinError, isReinError } from '@rein/base'
import { clipLine, hasWord, memoryAge as age, type MemoryEntry } from '@rein/memory'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { jsonLine } from '../json-line.ts'
import { withComposition } from '../session-command.ts'
import { neutralize } from '../terminal-text.ts'
import { displayWidth, padEndColumns } from '../columns.ts'

const SUBCOMMANDS = ['list', 'search', 'forget', 'export'] as const
/** Longest content a line shows, in characters, before the ellipsis. */
const CONTENT_CHARS = 100
/** Most entries `search` shows (the composition's `maxRecall` may cap it lower). */
const SEARCH_LIMIT = 50

export async function memoryCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [sub, ...rest] = args.positionals
  if (!SUBCOMMANDS.includes(sub as (typeof SUBCOMMANDS)[number])) {
    const what = sub === undefined ? 'needs a subcommand' : `has no subcommand "${sub}"`
    throw new ReinError('USAGE', `rein memory ${what}: list, search <query>, forget <id> or export (see rein memory --help)`)
  }
  // Only list reads --all; taken by the others, it would be silently ignored.
  if (args.options.all && sub !== 'list') throw new ReinError('USAGE', `rein memory ${sub} does not take --all; see rein memory --help`)
  if (args.options.json && sub === 'export') throw new ReinError('USAGE', 'rein memory export does not take --json: it always prints JSON lines; see rein memory --help')
  const query = rest.join(' ').trim()
  if (sub === 'search' && !hasWord(query)) throw new ReinError('USAGE', 'rein memory search needs words to look for: rein memory search <query>')
  if (sub === 'forget' && (rest.length !== 1 || rest[0]?.trim() === '')) throw new ReinError('USAGE', 'rein memory forget needs one id; rein memory list shows them')
  if ((sub === 'list' || sub === 'export') && rest.length > 0) throw new ReinError('USAGE', `rein memory ${sub} takes no arguments, not "${rest.join(' ')}"; see rein memory --help`)
  return withComposition(args.options, io, async ({ ctx, source }) => {
    const memory = requireMemory(ctx, source)
    const now = Date.now()
    if (sub === 'export') {
      for (const entry of await memory.list()) io.stdout.write(`${jsonLine(entry)}\n`)
      return 0
    }
    if (sub === 'forget') return forget(memory, io, rest[0]!, args.options.json)
    const projectId = await memory.projectIdFor(io.cwd)
    if (sub === 'search') {
      const found = await memory.recall({ scopes: ['user', 'project'], projectId, query, limit: SEARCH_LIMIT, now })
      if (args.options.json) return printJson(io, found)
      if (found.length === 0) io.stderr.write(`${neutralize(`no memories match "${clipLine(query, CONTENT_CHARS)}" (user, or project ${projectId})`)}\n`)
      printLines(io, found, projectId, now)
      return 0
    }
    const all = await memory.list()
    const shown = sorted(args.options.all ? all : all.filter((entry) => isLive(entry, now) && isHere(entry, projectId)), projectId)
    if (args.options.json) return printJson(io, shown)
    const hidden = all.length - shown.length
    if (shown.length === 0) {
      io.stderr.write(`${neutralize(`nothing remembered for the user or project ${projectId}${hidden > 0 ? '' : '; the agent saves memories with memory_write'}`)}\n`)
    }
    printLines(io, shown, projectId, now)
    if (hidden > 0) io.stderr.write(`(${hidden} more: retired, expired or other projects'; rein memory list --all shows them)\n`)
    return 0
  }, { quietAboutMemory: true })
}

type Memory = Context['memory']

/** `ctx.memory` with a store, or an error that names the rows to add. */
function requireMemory(ctx: Context, source: string): Memory {
  const where = source === 'built-in' ? 'the built-in composition' : source
  const memory = ctx.get('memory')
  if (memory === undefined) {
    throw new ReinError('CONFIG_INVALID', `${where} has no @rein/memory row: add one and a @rein/memory-sqlite row after it (see examples/cordis.yml) so the agent remembers across sessions`)
  }
  if (!memory.hasStore()) {
    throw new ReinError('NO_MEMORY_STORE', `${where} has @rein/memory but no memory store: add a @rein/memory-sqlite row after it (it keeps entries in $REIN_HOME/memory.db)`)
  }
  return memory
}

/** Deletes one entry and prints it: a line for people, or (`--json`) the entry as it was, as one JSON line. */
async function forget(memory: Memory, io: Io, id: string, json: boolean): Promise<number> {
  let entry: MemoryEntry
  try {
    entry = await memory.forget(id)
  } catch (error) {
    if (!isReinError(error, 'MEMORY_NOT_FOUND')) throw error
    throw new ReinError('MEMORY_NOT_FOUND', `no memory has the id "${id}"; rein memory list --all shows every id`, { cause: error, details: { id } })
  }
  if (json) return printJson(io, [entry])
  io.stdout.write(`${neutralize(`forgot ${entry.id} (${scopeOf(entry)}, ${entry.type}): ${clipLine(entry.content, CONTENT_CHARS)}`)}\n`)
  return 0
}

function printJson(io: Io, entries: readonly MemoryEntry[]): number {
  for (const entry of entries) io.stdout.write(`${jsonLine(entry)}\n`)
  return 0
}

/**
 * One line per entry, columns aligned: `mem_3fKq9xZa1bQe  user     preference  3 days ago  Prefers
 * short answers.` Another project's entry names its project; a retired or expired one says so.
 */
function printLines(io: Io, entries: readonly MemoryEntry[], projectId: string, now: number): void {
  // Each cell made safe before it is measured: a control shown as `^[` takes two columns, not none.
  const rows = entries.map((entry) => [entry.id, entry.scope, entry.type, age(entry.updatedAt, now), `${notes(entry, projectId, now)}${clipLine(entry.content, CONTENT_CHARS)}`].map(neutralize))
  const widths = [0, 1, 2, 3].map((column) => Math.max(0, ...rows.map((row) => displayWidth(row[column]!))))
  for (const row of rows) {
    const line = row.map((cell, column) => (column < 4 ? padEndColumns(cell, widths[column]!) : cell)).join('  ')
    io.stdout.write(`${line}\n`)
  }
}

/** `[project /other/repo] `, `[retired: mem_… corrects it] `, `[expired 2026-01-02] `, or nothing. */
function notes(entry: MemoryEntry, projectId: string, now: number): string {
  const tags = [
    ...(isHere(entry, projectId) ? [] : [`project ${entry.projectId ?? '?'}`]),
    ...(entry.retiredAt === undefined ? [] : [`retired: ${entry.retiredBy ?? 'a later entry'} corrects it`]),
    ...(entry.expiresAt !== undefined && entry.expiresAt <= now ? [`expired ${new Date(entry.expiresAt).toISOString().slice(0, 10)}`] : []),
  ]
  return tags.map((tag) => `[${tag}] `).join('')
}

function scopeOf(entry: MemoryEntry): string {
  return entry.scope === 'project' ? `project ${entry.projectId ?? '?'}` : entry.scope
}

function isLive(entry: MemoryEntry, now: number): boolean {
  return entry.retiredAt === undefined && (entry.expiresAt === undefined || entry.expiresAt > now)
}

/** The user's entries and this project's: what an agent working here recalls. */
function isHere(entry: MemoryEntry, projectId: string): boolean {
  return entry.scope === 'user' || entry.projectId === projectId
}

/** The user's first, then this project's, then other projects' (by project); newest first within each. */
function sorted(entries: readonly MemoryEntry[], projectId: string): MemoryEntry[] {
  const rank = (entry: MemoryEntry) => (entry.scope === 'user' ? 0 : entry.projectId === projectId ? 1 : 2)
  return [...entries].sort((a, b) => rank(a) - rank(b)
    || compare(a.projectId ?? '', b.projectId ?? '')
    || b.updatedAt - a.updatedAt
    || compare(a.id, b.id))
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}


