/**
 * What changed between two versions of a file, as hunks: the lines the model is shown after an
 * edit (the new text around each change, numbered), and the changes a diff card shows.
 */

import { structuredPatch } from 'diff'
import { cutHead } from '@rein/base'

/** One changed region with its context: the old side and the new side, as lines. */
export interface Hunk {
  oldStart: number
  newStart: number
  before: string[]
  after: string[]
}

/** Past this many changed lines the diff is not worth its cost; callers show a summary instead. */
const MAX_EDIT_LENGTH = 5000

/** The hunks between `before` and `after`, or `undefined` when they differ too much to diff cheaply. */
export function hunksOf(before: string, after: string, context: number): Hunk[] | undefined {
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, { context, maxEditLength: MAX_EDIT_LENGTH })
  if (patch === undefined) return undefined
  return patch.hunks.map((hunk) => {
    const old: string[] = []
    const fresh: string[] = []
    for (const line of hunk.lines) {
      // "\ No newline at end of file" describes the line before it; it is not content.
      if (line.startsWith('\\')) continue
      const text = line.slice(1).replace(/\r$/, '')
      if (line[0] !== '+') old.push(text)
      if (line[0] !== '-') fresh.push(text)
    }
    return { oldStart: hunk.oldStart, newStart: hunk.newStart, before: old, after: fresh }
  })
}

/**
 * The new text around each change, numbered like `read` shows it, at most `maxLines` lines; hunks
 * are separated by a blank line. Empty when the diff was too costly.
 */
export function editedLines(before: string, after: string, maxLines: number, lineChars: number): { text: string; omitted: number } {
  const hunks = hunksOf(before, after, 2)
  if (hunks === undefined) return { text: '', omitted: 0 }
  const shown: string[] = []
  let used = 0
  let omitted = 0
  for (const hunk of hunks) {
    const room = maxLines - used
    if (room <= 0) {
      omitted += hunk.after.length
      continue
    }
    if (shown.length > 0) shown.push('')
    hunk.after.slice(0, room).forEach((line, i) => {
      shown.push(`${hunk.newStart + i}\t${line.length > lineChars ? `${cutHead(line, lineChars)} … [line cut]` : line}`)
    })
    used += Math.min(room, hunk.after.length)
    omitted += Math.max(0, hunk.after.length - room)
  }
  return { text: shown.join('\n'), omitted }
}
