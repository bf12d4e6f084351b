/**
 * The one convention for output too long to show whole: a head, a note saying how much was left
 * out and where all of it is, and a tail. The agent uses it for every tool result over its spill
 * limits; a tool that streams unbounded output (bash) builds the same preview from what it kept.
 */

import { countLines, counted, cutHead, cutTail } from '@rein/base'

/** How much of a long text is shown: its first half as head, a quarter as tail. */
export interface SpillLimits {
  chars: number
  lines: number
}

/** The parts of a long text that are shown, and its totals. */
export interface SpillExcerpt {
  head: string
  headLines: number
  tail: string
  tailLines: number
  totalChars: number
  totalLines: number
}

/** Where the whole text went, or why it could not be kept. */
export type SpillSaved = { path: string } | { error: string }

/** The head and tail of `text` within `limits`: whole lines, a single overlong line cut. */
export function excerpt(text: string, limits: SpillLimits): SpillExcerpt {
  // A final newline ends the last line; the empty piece split leaves after it is no line.
  const lines = text === '' ? [] : text.split('\n')
  if (text.endsWith('\n')) lines.pop()
  const head = clip(lines, Math.floor(limits.lines / 2), Math.floor(limits.chars / 2), 'head')
  const tailChars = Math.floor(limits.chars / 4)
  // One line, cut for the head: its end is the output's end (an error after a long blob), shown as a
  // tail as well. No more lines are shown: it counts once.
  const onlyLine = lines.length === 1 && head.text.length < (lines[0] ?? '').length ? lines[0] : undefined
  const tail = onlyLine === undefined ? clip(lines.slice(head.count), Math.floor(limits.lines / 4), tailChars, 'tail') : { text: cutTail(onlyLine, tailChars), count: 0 }
  return { head: head.text, headLines: head.count, tail: tail.text, tailLines: tail.count, totalChars: text.length, totalLines: countLines(text) }
}

/** What a preview leaves out between its head and tail: `1,234 characters (56 lines)`, or `(inside one line)` when they are parts of one line. */
export function leftOut(shown: SpillExcerpt): string {
  const omittedChars = Math.max(0, shown.totalChars - shown.head.length - shown.tail.length)
  const omittedLines = Math.max(0, shown.totalLines - shown.headLines - shown.tailLines)
  return `${counted(omittedChars, 'character')} (${omittedLines === 0 ? 'inside one line' : counted(omittedLines, 'line')})`
}

/** Head, the note, tail: what the model reads in place of the whole `noun` ("result", "output"). */
export function spillPreview(shown: SpillExcerpt, saved: SpillSaved, noun = 'result'): string {
  const left = `[… ${leftOut(shown)} left out. `
  const whole = `The whole ${noun} (${counted(shown.totalChars, 'character')}, ${counted(shown.totalLines, 'line')})`
  const note = 'path' in saved
    // Said whether or not the model has a tool that reads files: the registry knows none by what it does.
    ? `${left}${whole} is saved at ${saved.path}; if one of your tools reads files, read the part you need from it (a line window, or a search) rather than all of it; otherwise work from this preview.]`
    : `${left}${whole} could not be saved (${saved.error}); only this preview exists.]`
  return [shown.head, note, shown.tail].filter((part) => part !== '').join('\n')
}

/** Whole lines from one end, within both limits; a single line longer than the character limit is cut. */
function clip(lines: readonly string[], maxLines: number, maxChars: number, end: 'head' | 'tail'): { text: string; count: number } {
  const taken: string[] = []
  let chars = 0
  for (let index = 0; index < lines.length && taken.length < maxLines; index++) {
    const line = lines[end === 'head' ? index : lines.length - 1 - index] ?? ''
    if (chars + line.length + 1 > maxChars) {
      if (taken.length === 0) taken.push(end === 'head' ? cutHead(line, maxChars) : cutTail(line, maxChars))
      break
    }
    taken.push(line)
    chars += line.length + 1
  }
  if (end === 'tail') taken.reverse()
  // A cut single line still counts as a line shown, so the omitted line count stays honest.
  return { text: taken.join('\n'), count: taken.length }
}
