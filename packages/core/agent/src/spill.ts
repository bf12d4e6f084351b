/**
 * Observation spill: a tool result too big for the model is saved whole in the session's folder
 * and the model reads a head, a tail and where the rest is. The same folder takes the files tools
 * stream unbounded output into (`ToolRun.spill`), so the model sees one convention.
 */

import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { countLines, ensurePrivateDir, openPrivateFile, PRIVATE_FILE_MODE } from '@rein/base'
import type { Session } from '@rein/session'
import { excerpt, spillPreview, type OpenSpill, type SpillFile, type SpillLimits, type SpillSaved } from '@rein/tools'

export type { SpillLimits } from '@rein/tools'

/** Where a spilled result went, as `tool/result` records it. */
export interface SpillRecord {
  path: string
  chars: number
  lines: number
}

const LABEL = /^[A-Za-z0-9_-]{1,40}$/

/** The folder spills go to: `spill/` in the session's folder (tool-calls.ts names it too), made 0700 on first use. */
async function spillFolder(session: Session): Promise<string> {
  const folder = join(await session.folder(), 'spill')
  await ensurePrivateDir(folder)
  return folder
}

export function exceeds(text: string, limits: SpillLimits): boolean {
  return text.length > limits.chars || countLines(text) > limits.lines
}

/** Writes the full text of a result; returns where it went. A file it could not fill (a full disk) is removed: the model is told nothing was saved. */
export async function spillResult(session: Session, callId: string, text: string): Promise<SpillRecord> {
  const path = join(await spillFolder(session), `${safeName(callId)}.result.txt`)
  const handle = await openPrivateFile(path, 'w')
  try {
    await handle.writeFile(text, 'utf8')
  } catch (error) {
    await rm(path, { force: true }).catch(() => {})
    throw error
  } finally {
    await handle.close()
  }
  return { path, chars: text.length, lines: countLines(text) }
}

/** What the model reads instead of the whole text: @rein/tools' one preview convention. */
export function preview(text: string, limits: SpillLimits, saved: SpillSaved): string {
  return spillPreview(excerpt(text, limits), saved)
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

/**
 * Call ids come from models: keep them to file-name-safe characters, plus a short hash of the id
 * when that changed it, so two ids never share a file (`a.1` and `a:1`, or two long ones).
 */
function safeName(callId: string): string {
  const safe = callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)
  return safe === callId && safe !== '' ? safe : `${safe}-${createHash('sha256').update(callId).digest('hex').slice(0, 10)}`
}
