/**
 * Target (d): damaged session logs into load and repair. Each must load or be refused with a
 * ReinError; one that loads must hold exactly what its file says, keep every complete event
 * before the damage, and — when what it holds is undamaged — be valid after a real resume's repair.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { isReinError } from '@rein/base'
import { deriveMessages, planRepair, repairEvents, summarize, type LoadedSession, type SessionEvent } from '@rein/session'
import { validateSessionInvariants } from '@rein/testkit'
import { rng } from '../plan.ts'
import { saveInput, savedInputs } from './corpus.ts'
import { bootStack, damageLog, firstDifference, lineRanges, writeBaseLogs, type BaseLog } from './session-logs.ts'

export interface LogFigures {
  logs: number
  byDamage: Record<string, number>
  loaded: number
  /** Refusals by error code. */
  refused: Record<string, number>
  /** Loads, resumes or readers of a loaded log (summary, messages, repair plan) that threw something other than a ReinError. */
  stray: number
  /** Loaded logs that differ from their file, lost a complete event before the damage, or were invalid after repair. */
  loadedWrong: number
  /** Logs that only lost their end (what a crash mid-write leaves) and were refused anyway. */
  tornRefused: number
  /** Loaded logs whose events were all undamaged, resumed and checked against the invariants. */
  resumedAndValid: number
  /** Loaded logs whose events were all undamaged and whose resume was refused anyway. */
  resumeRefused: number
  /** Loaded logs holding a line that was changed but still reads as a well-formed event (no checksum can tell). */
  changedButWellFormed: number
  /** Refused logs whose file a resume attempt changed (beyond cutting a torn last line, which any open does). */
  refusedChanged: number
  replayed: number
  saved: string[]
  examples: string[]
}

/**
 * Every log cut short (what a crash leaves), and every 'resumeEvery'th other loaded one, is also
 * resumed (open, repair, flush, close) and read back.
 */
export async function fuzzLogs(seed: number, count: number, resumeEvery = 1): Promise<LogFigures> {
  const figures: LogFigures = { logs: 0, byDamage: {}, loaded: 0, refused: {}, stray: 0, loadedWrong: 0, tornRefused: 0, resumedAndValid: 0, resumeRefused: 0, changedButWellFormed: 0, refusedChanged: 0, replayed: 0, saved: [], examples: [] }
  const home = mkdtempSync(join(tmpdir(), 'rein-soak-fuzz-logs-'))
  const previousHome = process.env.REIN_HOME
  process.env.REIN_HOME = home
  const root = join(home, 'sessions')
  const stack = await bootStack(root, home)
  const seen = new Set<string>()
  const problem = (what: string, detail: string, bytes: Uint8Array, save: boolean) => {
    if (figures.examples.length < 5) figures.examples.push(`${what}: ${detail.slice(0, 500)}`)
    const kind = `${what}:${detail.split('\n')[0]!.replace(/\d+/g, 'N').slice(0, 80)}`
    if (!save || seen.has(kind)) return
    seen.add(kind)
    figures.saved.push(saveInput('session-log', what, bytes, '.jsonl'))
  }
  try {
    const bases = await writeBaseLogs(stack, root)
    const originals = new Map(bases.map((base) => [base.id, eventsOf(base)]))
    const check = async (base: BaseLog, bytes: Buffer, damage: string, resume: boolean, save: boolean) => {
      figures.logs++
      figures.byDamage[damage] = (figures.byDamage[damage] ?? 0) + 1
      const file = join(root, `${base.id}.jsonl`)
      writeFileSync(file, bytes)
      const original = originals.get(base.id)!
      const at = firstDifference(base.bytes, bytes)
      let loaded: LoadedSession
      try {
        loaded = await stack.ctx.sessions.load(base.id)
      } catch (error) {
        if (!isReinError(error)) {
          figures.stray++
          return problem('stray-load', String((error as Error)?.stack ?? error), bytes, save)
        }
        figures.refused[error.code] = (figures.refused[error.code] ?? 0) + 1
        // A log cut anywhere after its header line is what a crash mid-write leaves: it must load.
        const headerEnd = base.bytes.indexOf(0x0a) + 1
        if (damage !== 'replay' && at >= bytes.length && bytes.length >= headerEnd) {
          figures.tornRefused++
          problem('torn-refused', `${error.code}: ${error.message}`, bytes, save)
        }
        if (resume) {
          const strayResume = await resumeThrowsStray(stack, base.id)
          if (strayResume) {
            figures.stray++
            problem('stray-resume', strayResume, bytes, save)
          }
          if (!leftAsItWas(readFileSync(file), bytes)) {
            figures.refusedChanged++
            problem('refused-changed', error.code, bytes, save)
          }
        }
        return
      }
      figures.loaded++
      const wrong = faithfulness(bytes, loaded.events) ?? (damage === 'replay' ? undefined : keptBefore(base.bytes, at, original, loaded.events))
      if (wrong) {
        figures.loadedWrong++
        return problem('loaded-wrong', wrong, bytes, save)
      }
      const strayReader = readersThrowStray(loaded)
      if (strayReader) {
        figures.stray++
        return problem('stray-reader', strayReader, bytes, save)
      }
      const pristine = damage !== 'replay' && loaded.events.every((event, i) => isDeepStrictEqual(event, original[i]))
      if (!pristine) figures.changedButWellFormed++
      const cut = damage !== 'replay' && at >= bytes.length
      if (!resume && !cut) return
      const before = loaded.events
      try {
        const { agent } = await stack.ctx.agents.resume(base.id)
        await agent.close()
      } catch (error) {
        if (isReinError(error) && !pristine) return
        if (isReinError(error)) {
          figures.resumeRefused++
          return problem('resume-refused', `${error.code}: ${error.message}`, bytes, save)
        }
        figures.stray++
        return problem('stray-resume', String((error as Error)?.stack ?? error), bytes, save)
      }
      if (!pristine) return
      const after = (await stack.ctx.sessions.load(base.id)).events
      const invalid = validateSessionInvariants(after)
      const kept = before.every((event, i) => isDeepStrictEqual(event, after[i]))
      if (invalid.length > 0 || !kept) {
        figures.loadedWrong++
        return problem('loaded-wrong', kept ? `invalid after repair: ${invalid.slice(0, 3).join('; ')}` : 'the repair changed events it should only have added to', bytes, save)
      }
      figures.resumedAndValid++
    }
    for (const { bytes } of savedInputs('session-log')) {
      const base = bases.find((candidate) => bytes.includes(candidate.id)) ?? bases[0]!
      await check(base, bytes, 'replay', true, false)
      figures.replayed++
    }
    const r = rng(seed)
    for (let i = 0; i < count; i++) {
      const base = r.pick(bases)
      const { bytes, damage } = damageLog(r, base.bytes)
      await check(base, bytes, damage, i % resumeEvery === 0, true)
    }
  } finally {
    await stack.dispose()
    if (previousHome === undefined) delete process.env.REIN_HOME
    else process.env.REIN_HOME = previousHome
    rmSync(home, { recursive: true, force: true })
  }
  return figures
}

/**
 * A refused log after a resume attempt: unchanged, except what opening any log does first — a torn
 * last line (never acknowledged) cut off, or a whole last line without its newline given one.
 */
function leftAsItWas(after: Buffer, before: Buffer): boolean {
  if (after.equals(before)) return true
  const whole = before.subarray(0, before.lastIndexOf(0x0a) + 1)
  return after.equals(whole) || after.equals(Buffer.concat([before, Buffer.from('\n')]))
}

/** The events of an undamaged base log, as its lines say. */
function eventsOf(base: BaseLog): SessionEvent[] {
  return lineRanges(base.bytes).slice(1).map(([start, end]) => JSON.parse(base.bytes.subarray(start, end).toString('utf8')) as SessionEvent)
}

/** Why the loaded events are not what the file's lines say, or undefined when they are. */
function faithfulness(bytes: Buffer, events: readonly SessionEvent[]): string | undefined {
  const lines = lineRanges(bytes).slice(1)
  for (const [i, event] of events.entries()) {
    const range = lines[i]
    if (!range) return `event ${i} loaded, but the file has only ${lines.length} event lines`
    let value: unknown
    try {
      value = JSON.parse(bytes.subarray(range[0], range[1]).toString('utf8'))
    } catch {
      return `event ${i} loaded from a line that is not JSON`
    }
    if (!isDeepStrictEqual(value, event)) return `event ${i} differs from its line`
  }
  // Every line but a torn last one must have loaded.
  if (events.length < lines.length - 1) return `${lines.length - events.length} lines were dropped, more than a torn last line`
  return undefined
}

/** Why a complete event before the damage at `at` is missing or changed, or undefined. */
function keptBefore(originalBytes: Buffer, at: number, original: readonly SessionEvent[], events: readonly SessionEvent[]): string | undefined {
  const whole = lineRanges(originalBytes).slice(1).filter(([, end]) => end <= at).length
  for (let i = 0; i < whole; i++) {
    if (!isDeepStrictEqual(events[i], original[i])) return `event ${i}, complete before the damage at byte ${at}, was ${events[i] ? 'changed' : 'lost'}`
  }
  return undefined
}

/** What a reader of a loaded log does (the summary, the messages, the repair plan), or the stray it threw. */
function readersThrowStray(loaded: LoadedSession): string | undefined {
  try {
    summarize(loaded.header, loaded.events)
    deriveMessages(loaded.events)
    repairEvents(planRepair(loaded.events, (name) => name === 'read'))
  } catch (error) {
    if (!isReinError(error)) return String((error as Error)?.stack ?? error)
  }
  return undefined
}

/** A resume of a refused log: it must be refused too, with a ReinError. */
async function resumeThrowsStray(stack: Awaited<ReturnType<typeof bootStack>>, id: string): Promise<string | undefined> {
  try {
    const { agent } = await stack.ctx.agents.resume(id)
    await agent.close()
    return 'a log that load refused was resumed'
  } catch (error) {
    return isReinError(error) ? undefined : String((error as Error)?.stack ?? error)
  }
}
