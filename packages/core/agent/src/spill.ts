/**
 * Observation spill: a tool result too big for the model is saved whole in the session's folder
 * and the model reads a head, a tail and where the rest is. The same folder takes the files tools
 * stream unbounded output into (`ToolRun.spill`), so the model sees one convention.
 */

import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { ensurePrivateDir, openPrivateFile, PRIVATE_FILE_MODE } from '@rein/base'
import type { Session } from '@rein/session'
import type { OpenSpill, SpillFile } from '@rein/tools'

export interface SpillLimits {
  chars: number
  lines: number
}

/** Where a spilled result went, as `tool/result` records it. */
export interface SpillRecord {
  path: string
  chars: number
  lines: number
}

const LABEL = /^[A-Za-z0-9_-]{1,40}$/

/** The folder spills go to: `spill/` in the session's folder, made 0700 on first use. */
async function spillFolder(session: Session): Promise<string> {
  const folder = join(await session.folder(), 'spill')
  await ensurePrivateDir(folder)
  return folder
}

function countLines(text: string): number {
  let lines = 1
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++
  return lines
}

export function exceeds(text: string, limits: SpillLimits): boolean {
  return text.length > limits.chars || countLines(text) > limits.lines
}

/** Writes the full text of a result; returns where it went. */
export async function spillResult(session: Session, callId: string, text: string): Promise<SpillRecord> {
  const path = join(await spillFolder(session), `${safeName(callId)}.result.txt`)
  const handle = await openPrivateFile(path, 'w')
  try {
    await handle.writeFile(text, 'utf8')
  } finally {
    await handle.close()
  }
  return { path, chars: text.length, lines: countLines(text) }
}

/**
 * What the model reads instead: the first half of the allowance, the last quarter, and between
 * them how much was left out and where all of it is (`saved`), or why it could not be kept.
 */
export function preview(text: string, limits: SpillLimits, saved: { path: string } | { error: string }): string {
  const lines = text.split('\n')
  const head = clip(lines, Math.floor(limits.lines / 2), Math.floor(limits.chars / 2), 'head')
  const tail = clip(lines.slice(head.count), Math.floor(limits.lines / 4), Math.floor(limits.chars / 4), 'tail')
  const count = (n: number) => n.toLocaleString('en-US')
  const left = `[… ${count(text.length - head.text.length - tail.text.length)} characters (${count(lines.length - head.count - tail.count)} lines) left out. `
  const whole = `The whole result (${count(text.length)} characters, ${count(lines.length)} lines)`
  const note = 'path' in saved
    ? `${left}${whole} is saved at ${saved.path}; read the part you need from that file (a line window, or a search) rather than all of it.]`
    : `${left}${whole} could not be saved (${saved.error}); only this preview exists.]`
  return [head.text, note, tail.text].filter((part) => part !== '').join('\n')
}

/** Whole lines from one end, within both limits; a single line longer than the character limit is cut. */
function clip(lines: readonly string[], maxLines: number, maxChars: number, end: 'head' | 'tail'): { text: string; count: number } {
  const taken: string[] = []
  let chars = 0
  for (let index = 0; index < lines.length && taken.length < maxLines; index++) {
    const line = lines[end === 'head' ? index : lines.length - 1 - index] ?? ''
    if (chars + line.length + 1 > maxChars) {
      if (taken.length === 0) taken.push(end === 'head' ? line.slice(0, maxChars) : line.slice(-maxChars))
      break
    }
    taken.push(line)
    chars += line.length + 1
  }
  if (end === 'tail') taken.reverse()
  // A cut single line still counts as a line shown, so the omitted line count stays honest.
  return { text: taken.join('\n'), count: taken.length }
}

/** `ToolRun.spill` for one call: a new private file per label in the session's spill folder. */
export function spillOpener(session: Session, callId: string): OpenSpill {
  const used = new Map<string, number>()
  return async (label: string): Promise<SpillFile> => {
    const name = LABEL.test(label) ? label : 'output'
    const n = (used.get(name) ?? 0) + 1
    used.set(name, n)
    const path = join(await spillFolder(session), `${safeName(callId)}.${name}${n > 1 ? `-${n}` : ''}.txt`)
    return { path, stream: createWriteStream(path, { flags: 'w', mode: PRIVATE_FILE_MODE }) }
  }
}

/** Call ids come from models: keep them to file-name-safe characters. */
function safeName(callId: string): string {
  return callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100) || 'call'
}
