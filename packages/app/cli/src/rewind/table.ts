/**
 * A rewind plan or result as people read it: one row per file (file, outcome, reason), newest
 * change first, then what the records cannot restore, then the counts.
 */

import { isAbsolute, relative, sep } from 'node:path'
import { listedPath, shorten } from '@rein/base'
import type { PlanAction, PlanItem, RewindPlan, RewindResult } from '@rein/checkpoint'
import { displayWidth, padEndColumns } from '../columns.ts'

interface Row {
  file: string
  outcome: string
  reason: string
  newest: number
}

const PLANNED: Record<PlanAction, string> = {
  restore: 'restore',
  remove: 'remove',
  already: 'already restored',
  drifted: 'drifted',
  skipped: 'skipped',
}

/** Whether a plan leaves files as they are (drifted or skipped), or cannot undo a turn whose checkpoints retention dropped or a command a kill cut off. */
export function planIncomplete(plan: RewindPlan): boolean {
  return plan.pruned.length > 0 || plan.cutOff.length > 0 || plan.items.some((item) => item.action === 'drifted' || item.action === 'skipped')
}

/** Whether a rewind left files as they are (drifted, skipped or failed), or could not undo a turn whose checkpoints retention dropped or a command a kill cut off. */
export function resultIncomplete(result: RewindResult): boolean {
  return result.pruned.length > 0 || result.cutOff.length > 0 || result.drifted.length + result.skipped.length + result.failed.length > 0
}

/** The plan's lines: table, what is not covered, counts. `cwd`: paths under it are shown relative. */
export function planLines(plan: RewindPlan, cwd: string): string[] {
  // A file a command created is moved aside, not removed (it may have come from elsewhere).
  const rows = plan.items.map((item) => row(item, item.action === 'remove' && item.changedWhile !== undefined ? 'move aside' : PLANNED[item.action], cwd))
  const counts = countOf(rows)
  return [...table(rows), ...notCovered(plan.notCovered), ...counts]
}

/** The result's lines, in the same shape as the plan's. */
export function resultLines(result: RewindResult, cwd: string): string[] {
  const rows = [
    ...result.restored.map(restoredRow(cwd)),
    ...result.already.map((item) => row(item, 'already restored', cwd)),
    ...result.drifted.map((item) => row(item, 'drifted', cwd)),
    ...result.skipped.map((item) => row(item, 'skipped', cwd)),
    // An fs error names the file as it is: one with a line break or a bidi control must not break or reorder the row.
    ...result.failed.map((item) => ({ ...row(item, 'failed', cwd), reason: joinReasons(listedPath(item.error), changedWhile(item)) })),
  ].sort((a, b) => b.newest - a.newest)
  return [...table(rows), ...notCovered(result.notCovered), ...countOf(rows)]
}

/** A restored, removed or moved file; where a file moved aside, or a copy of a restored one, went. */
function restoredRow(cwd: string): (item: PlanItem) => Row {
  return (item) => {
    if (item.movedTo !== undefined) return { ...row(item, 'moved aside', cwd), reason: joinReasons(`now at ${listedPath(item.movedTo)}`, item.reason, changedWhile(item)) }
    // An empty folder a command removed is made again, a file's mode alone given back: restored, like a file given back its content.
    const done = row(item, item.before === null && !item.existed && !item.modeOnly ? 'removed' : 'restored', cwd)
    return item.copiedTo === undefined ? done : { ...done, reason: joinReasons(item.reason, changedWhile(item), `what it held is at ${listedPath(item.copiedTo)}`) }
  }
}

function row(item: PlanItem, outcome: string, cwd: string): Row {
  // A folder item with its slash: it may share its path with a file row (a file put where the folder was).
  // A name with a line break or an escape sequence is quoted: it must not pass for a row, or reach the terminal.
  return { file: listedPath(`${shown(item.file, cwd)}${item.folder ? '/' : ''}`), outcome, reason: joinReasons(item.reason, changedWhile(item)), newest: item.seqs[0] ?? 0 }
}

/** A file inside the session's directory relative to it, any other absolute. */
function shown(file: string, cwd: string): string {
  const inside = relative(cwd, file)
  return inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside) ? file : inside
}

/** Most characters of a command a row shows: enough to know it, not a script in a table. */
const COMMAND_CHARS = 80

/**
 * A file that changed while a command ran may have been edited by a person too: say which command,
 * on one line (quoted as JSON when it spans lines, a heredoc say) and cut when long.
 */
function changedWhile(item: PlanItem): string | undefined {
  if (item.changedWhile === undefined) return undefined
  const command = shorten(item.changedWhile, COMMAND_CHARS)
  const quoted = listedPath(command)
  return `changed while ${quoted === command ? `\`${command}\`` : quoted} ran`
}

function joinReasons(...reasons: (string | undefined)[]): string {
  return reasons.filter((reason) => reason !== undefined && reason !== '').join('; ')
}

function table(rows: readonly Row[]): string[] {
  if (rows.length === 0) return []
  // By display width: a name with combining marks or wide characters must not shift the columns after it.
  const fileWidth = Math.max(4, ...rows.map((item) => displayWidth(item.file)))
  const outcomeWidth = Math.max(7, ...rows.map((item) => displayWidth(item.outcome)))
  const line = (file: string, outcome: string, reason: string) => `${padEndColumns(file, fileWidth)}  ${padEndColumns(outcome, outcomeWidth)}  ${reason}`.trimEnd()
  return [line('file', 'outcome', 'reason'), ...rows.map((item) => line(item.file, item.outcome, item.reason))]
}

function notCovered(lines: readonly string[]): string[] {
  return lines.length === 0 ? [] : ['not covered by the records (check these by hand):', ...lines.map((text) => `  ${text}`)]
}

/** How a plan's outcomes read as counts: `2 to restore`, not `2 restore`. */
const COUNTED: Record<string, string> = { restore: 'to restore', remove: 'to remove' }

/** `2 restored, 1 drifted`: each outcome with its count, in the order they first appear. */
/** The count line; none without rows (only what is not covered, or what retention dropped, is left to say). */
function countOf(rows: readonly Row[]): string[] {
  if (rows.length === 0) return []
  const counts = new Map<string, number>()
  for (const item of rows) counts.set(item.outcome, (counts.get(item.outcome) ?? 0) + 1)
  return [[...counts].map(([outcome, count]) => `${count} ${COUNTED[outcome] ?? outcome}`).join(', ')]
}
