/**
 * `rein sessions`: stored sessions, newest first, with where each stands and what it cost; a child
 * session (a subagent's) is indented under its parent.
 */

import type { SessionSummary } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { withComposition } from '../session-command.ts'
import { sessionStatusWord, tokenCount } from '../render.ts'
import { jsonLine } from '../json-line.ts'
import { neutralize } from '../terminal-text.ts'
import { clipColumns, displayWidth, padEndColumns, padStartColumns } from '../columns.ts'
import { formatMoney, groupDigits, isReinError, maskText, messageOf, secretValues, shellWord } from '@rein/base'
// rein's own: it masks a key cut off at a title's closing `…` too.
import { maskKeyShapes } from '../key-shapes.ts'

/** Most columns a title takes in the listing; `--json` gives it whole. */
const TITLE_COLUMNS = 80

export async function sessionsCommand(args: ParsedArgs, io: Io): Promise<number> {
  return withComposition(args.options, io, async ({ ctx }) => {
    // A damaged file is not listed, but named: nothing is hidden silently.
    let unlisted = 0
    const unreadable = (id: string, error: unknown) => {
      unlisted++
      io.stderr.write(`${neutralize(`(session ${shellWord(id)} not listed: ${reasonOf(error)}; ${adviceOn(id, error)})`)}\n`)
    }
    const sessions = [...await ctx.sessions.list({ unreadable })].sort(newestFirst)
    // Sessions there, none readable: no "no sessions yet", and an exit code a script can tell from an empty store.
    const code = sessions.length === 0 && unlisted > 0 ? 1 : 0
    if (args.options.json) {
      for (const session of sessions) io.stdout.write(`${jsonLine(session)}\n`)
      return code
    }
    if (sessions.length === 0) {
      io.stderr.write(unlisted > 0 ? `none of the ${unlisted} stored session${unlisted === 1 ? '' : 's'} could be listed (above)\n` : 'no sessions yet; rein run "…" starts one\n')
      return code
    }
    // A first message may quote a key: masked by its shape, or as an environment secret's value, as tool lines are.
    const secrets = secretValues(io.env)
    const rows = tree(sessions)
    // Ids are whatever a store was given (a UUID from rein, any name from code), and children are indented.
    const idColumns = Math.max(...rows.map(({ session, level }) => displayWidth(idCell(session, level))))
    for (const { session, level } of rows) io.stdout.write(`${neutralize(line(session, level, idColumns, secrets))}\n`)
    return 0
  })
}

/**
 * Each session once, a child right under its parent at one level deeper, in the order given at
 * each level. A session whose parent is not listed is at the top; so is the newest of a group whose
 * headers name each other as parents, which only a hand-edited log can hold.
 */
function tree(sessions: readonly SessionSummary[]): { session: SessionSummary; level: number }[] {
  const ids = new Set(sessions.map((session) => session.id))
  const children = new Map<string, SessionSummary[]>()
  for (const session of sessions) {
    const parent = session.parentSessionId
    if (parent === undefined || !ids.has(parent)) continue
    const siblings = children.get(parent) ?? []
    siblings.push(session)
    children.set(parent, siblings)
  }
  const rows: { session: SessionSummary; level: number }[] = []
  const placed = new Set<string>()
  const place = (session: SessionSummary, level: number) => {
    if (placed.has(session.id)) return
    placed.add(session.id)
    rows.push({ session, level })
    for (const child of children.get(session.id) ?? []) place(child, level + 1)
  }
  for (const session of sessions) if (session.parentSessionId === undefined || !ids.has(session.parentSessionId)) place(session, 0)
  for (const session of sessions) place(session, 0)
  return rows
}

/** `3f2a9c1e-…  2026-12-01 10:04 UTC  completed     deepseek-chat      2 turns    12,301 tok    0.0042  Fix the parser…` */
function line(session: SessionSummary, level: number, idColumns: number, secrets: readonly string[]): string {
  const when = shownTime(session.lastActivity)
  const tokens = tokenCount(session.usage)
  const cost = session.cost === undefined ? '-' : formatMoney(session.cost)
  return [
    padEndColumns(idCell(session, level), idColumns),
    when,
    padEndColumns(sessionStatusWord(session.status), 12),
    // A model id is any text a log holds: made safe first (`^[` takes two columns), then padded by display width.
    padEndColumns(neutralize(session.model ?? '-'), 16),
    `${padStartColumns(String(session.turns), 3)} turn${session.turns === 1 ? ' ' : 's'}`,
    // `~`: part estimated (a provider reported no usage), as `rein run` marks it.
    padStartColumns(`${session.usageEstimated ? '~' : ''}${groupDigits(tokens)} tok`, 12),
    padStartColumns(cost, 8),
    // The store cuts a title at a number of words: one long word (a pasted log line, CJK text) is cut here, made safe first.
    session.title === undefined ? '(no message)' : clipColumns(neutralize(maskText(maskKeyShapes(session.title), secrets)), TITLE_COLUMNS),
  ].join('  ')
}

/** The id, two spaces in for each level below the top: a child under its parent. */
function idCell(session: SessionSummary, level: number): string {
  return `${'  '.repeat(level)}${session.id}`
}

/**
 * `2026-12-01 10:04 UTC`: the instant a time names, in UTC and marked so (a bare clock time reads as
 * local time), as `rein memory` gives its dates in UTC. A hand-edited time with an offset is the
 * same instant in UTC; one that names no instant is shown as written.
 */
function shownTime(time: string): string {
  const value = Date.parse(time)
  if (Number.isNaN(value)) return time.replace('T', ' ').slice(0, 16)
  return `${new Date(value).toISOString().replace('T', ' ').slice(0, 16)} UTC`
}

/** Newest first by the instant each time names (a hand-edited one may carry an offset), ties by id: the order every store's list may not keep. */
function newestFirst(a: SessionSummary, b: SessionSummary): number {
  return instant(b.lastActivity) - instant(a.lastActivity) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

function instant(time: string): number {
  const value = Date.parse(time)
  return Number.isNaN(value) ? 0 : value
}

/** What to do about a log not listed: `rein show` says why, unless its file name is no id `show` takes. */
function adviceOn(id: string, error: unknown): string {
  if (isReinError(error, 'INVALID_SESSION_ID')) return 'its file name is no session id: rename the file or move it out of the sessions folder'
  return `rein show ${shellWord(id)} says more`
}

/** Why a session could not be read, in a word: the error's code, else its message. */
function reasonOf(error: unknown): string {
  if (isReinError(error)) return error.code
  return messageOf(error)
}
