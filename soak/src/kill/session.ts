/**
 * One session's life under the kill suite: `rein run`, killed as planned, `rein resume` (killed too
 * when planned) until the session is finished, then everything a person relies on is checked and
 * counted, and a `rein rewind --to 1` (killed once when planned, then run again) must bring the
 * workspace back to how it started.
 */

import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDeepStrictEqual } from 'node:util'
import type { SessionEvent } from '@rein/session'
import { startMockOpenAiServer, validateSessionInvariants } from '@rein/testkit'
import { completed, leftInSessions, lines, loadLogs, openJobs, repeats, replaySafe, topLevel, tree, userMessages, type Log } from './checks.ts'
import { describeKill, outerKill, pluginKill, type Kill } from './kills.ts'
import { runRein, type ReinExit } from '../rein-process.ts'
import { killFound, processesWith } from './processes.ts'
import { model, prepareRun, SEED, TASK, writeComposition, type RunFolders } from './scenario.ts'
import type { Tally } from './tally.ts'

export interface SessionPlan {
  /** For reports: which plan this is. */
  label: string
  /** The kills of the `rein run` and the `rein resume`s after it, in order; later processes run to their end. */
  kills: readonly Kill[]
  /** Kills of the first `rein rewind`s, in order (then one runs to its end). */
  rewindKills?: readonly Kill[]
}

/** Runs `rein <args>` with `kill`, counting it; `before` is the workspace before it, for a rewind's kill. */
type SpawnCounted = (args: readonly string[], kill: Kill | undefined, before?: Record<string, string>) => Promise<ReinExit & { killed: boolean }>

/** A session needing more processes than this is counted as never finishing. */
const MAX_PROCESSES = 12

/** How long processes a finished session left may take to disappear (they were just sent SIGKILL). */
const SETTLE_MS = 2_000

/** Runs `plan` in a new folder under `base`, adding what it counted to `tally`. */
export async function soakSession(plan: SessionPlan, tally: Tally, base: string): Promise<void> {
  const marker = `REINSOAK${randomBytes(8).toString('hex')}`
  const root = mkdtempSync(join(base, 'session-'))
  const folders = prepareRun(root)
  const server = await startMockOpenAiServer(model(folders, marker))
  writeComposition(folders, server.url)
  let problems = 0
  const note = (text: string) => {
    problems++
    tally.details.push(`[${plan.label}] ${text}`)
  }
  const env = (kill: Kill | undefined) => ({ REIN_HOME: folders.home, REIN_SOAK_RUN: marker, REIN_SOAK_KILL: pluginKill(kill) })
  const spawnCounted: SpawnCounted = async (args, kill, before) => {
    const exit = await runRein({ cwd: folders.workspace, args, env: env(kill), kill: outerKill(kill) })
    tally.processes++
    const killed = exit.signal === 'SIGKILL'
    // A rare kill counts once what it leaves shows it came where it was aimed.
    const where = killed && kill ? missedPoint(kill, folders, before) : undefined
    if (where !== undefined) note(`the kill ${describeKill(kill!)} did not land there: ${where}`)
    else if (killed && kill) {
      tally.landed[kill.by] = (tally.landed[kill.by] ?? 0) + 1
      if (args[0] === 'resume') tally.resumesKilled++
    }
    return { ...exit, killed }
  }
  try {
    tally.sessions++
    const seen = new Map<string, Map<string, number>>()
    const kills = [...plan.kills]
    let id: string | undefined
    let finished = false
    for (let count = 0; count < MAX_PROCESSES && !finished; count++) {
      const kill = kills.shift()
      const args = id === undefined ? ['run', '--yes', TASK] : ['resume', '--yes', id]
      const exit = await spawnCounted(args, kill)
      if (!exit.killed && exit.code !== 0) {
        tally.failedUnkilled++
        note(`rein ${args[0]} exited ${exit.code} without being killed: ${exit.stderr.trim().split('\n').slice(-3).join(' | ')}`)
      }
      const { logs } = await observe(folders, seen, tally, note)
      id ??= topLevel(logs)
      if (id === undefined) {
        if (exit.killed) tally.runsBeforeLog++
        continue
      }
      const events = logs.get(id)?.events
      if (!events || !completed(events)) continue
      finished = true
      // Killed while it waited for its background job: the next `rein resume` reaps the job and,
      // its notice being news for the model, continues the completed session to tell it (exit 0).
      if (openJobs(events).length > 0) {
        const reap = await spawnCounted(['resume', '--yes', id], undefined)
        if (reap.code !== 0) {
          tally.failedUnkilled++
          note(`the resume that reaps jobs exited ${reap.code}: ${reap.stderr.trim()}`)
        }
      }
    }
    if (!finished || id === undefined) {
      tally.incomplete++
      note(`not finished after ${MAX_PROCESSES} processes`)
      return
    }
    await countLeftRunning(marker, tally, note)
    const { logs } = await observe(folders, seen, tally, note)
    countLogs(logs, seen, tally, note)
    const effects = lines(folders.effects)
    const repeated = repeats(effects)
    tally.unsafeEffects += effects.length
    tally.unsafeRepeated += repeated.extra
    if (repeated.extra > 0) note(`non-replay-safe effects repeated: ${repeated.which.join(', ')}`)
    const safe = replaySafe(lines(folders.runs), logs.values())
    tally.safeRerunTwice += safe.extraRuns
    tally.safeLeftUnknown += safe.leftUnknown
    for (const line of safe.which) note(line)
    await rewindAndCheck(id, folders, plan.rewindKills ?? [], spawnCounted, tally, note)
    const left = leftInSessions(folders.sessions)
    tally.locksLeft += left.length
    if (left.length > 0) note(`left in the sessions folder: ${left.join(', ')}`)
  } finally {
    killFound(processesWith(marker))
    await server.close()
    if (process.env.REIN_SOAK_KEEP === '1' && problems > 0) note(`kept ${root}`)
    else rmSync(root, { recursive: true, force: true })
  }
}

/** Loads every log after a process ended: counts those that fail, and notes the user messages each holds. */
async function observe(folders: RunFolders, seen: Map<string, Map<string, number>>, tally: Tally, note: (text: string) => void) {
  const loaded = await loadLogs(folders.sessions)
  tally.loadFailures += loaded.failed.length
  for (const failure of loaded.failed) note(`log failed to load: ${failure}`)
  for (const [id, log] of loaded.logs) {
    const counts = seen.get(id) ?? new Map<string, number>()
    for (const [text, count] of userMessages(log.events)) counts.set(text, Math.max(count, counts.get(text) ?? 0))
    seen.set(id, counts)
  }
  return loaded
}

/** Invariant violations of every final log, and user messages once seen but now missing (or the task twice). */
function countLogs(logs: ReadonlyMap<string, Log>, seen: ReadonlyMap<string, ReadonlyMap<string, number>>, tally: Tally, note: (text: string) => void) {
  for (const [id, log] of logs) {
    const violations = validateSessionInvariants(log.events)
    tally.invariantViolations += violations.length
    for (const violation of violations) note(`${id.slice(0, 8)}: ${violation}`)
    const now = userMessages(log.events)
    for (const [text, count] of seen.get(id) ?? []) {
      const lost = count - (now.get(text) ?? 0)
      if (lost > 0) {
        tally.userLost += lost
        note(`${id.slice(0, 8)}: user message lost: ${JSON.stringify(text.slice(0, 60))}`)
      }
    }
    if (log.header.parentSessionId === undefined && now.get(TASK) !== 1) {
      tally.userLost++
      note(`${id.slice(0, 8)}: the task is in the log ${now.get(TASK) ?? 0} times`)
    }
  }
}

/** Processes carrying the run's marker once its session is finished: each was left running. */
async function countLeftRunning(marker: string, tally: Tally, note: (text: string) => void) {
  let found = processesWith(marker)
  for (let waited = 0; found.length > 0 && waited < SETTLE_MS; waited += 100) {
    await sleep(100)
    found = processesWith(marker)
  }
  tally.processesLeft += found.length
  if (found.length > 0) note(`left running: ${found.map((process) => `${process.pid} ${process.command.slice(0, 80)}`).join('; ')}`)
  killFound(found)
}

/** `rein rewind <id> --to 1` (killed first, when planned): the workspace must be as it was before the first turn. */
async function rewindAndCheck(id: string, folders: RunFolders, kills: readonly Kill[], spawnCounted: SpawnCounted, tally: Tally, note: (text: string) => void) {
  const args = ['rewind', id, '--to', '1']
  for (const kill of kills) {
    const killed = await spawnCounted(args, kill, tree(folders.workspace))
    if (!killed.killed) note(`the rewind was not killed ${describeKill(kill)} (exit ${killed.code})`)
  }
  const rewind = await spawnCounted(args, undefined)
  const now = tree(folders.workspace)
  if ((rewind.code === 0 || onlyCutOff(rewind.code, rewind.stdout)) && isDeepStrictEqual(now, SEED)) return
  tally.rewindFailed++
  note(`rewind exited ${rewind.code}; workspace ${JSON.stringify(now)} (expected ${JSON.stringify(SEED)}); ${rewind.stdout.trim().replaceAll('\n', ' | ')} ${rewind.stderr.trim()}`)
}

/**
 * Exit 5 for nothing but a command a kill cut off, which the rewind names as not undone (what it
 * changed was never recorded) — a background job's too, lost with the process that ran it: every
 * file it recorded is back, which the workspace then shows.
 */
function onlyCutOff(code: number | null, stdout: string): boolean {
  const lines = stdout.trim().split('\n')
  const counts = lines.at(-1) ?? ''
  return code === 5 && lines.some((line) => /^ {2}`.*` (was cut off when rein was stopped|had no result when rein was stopped|ran as background job \S+, which (was lost when rein was stopped|has no end in the log))/.test(line)) && !/\b(drifted|skipped|failed)\b/.test(counts)
}

/**
 * Why a landed rare kill did not come where it was aimed, judged by what it left; undefined when it
 * did (and for random kills, which have no aim to check).
 */
function missedPoint(kill: Kill, folders: RunFolders, before: Record<string, string> | undefined): string | undefined {
  if (kill.by === 'lock') {
    const names = existsSync(folders.sessions) ? readdirSync(folders.sessions) : []
    // The store writes its pid file at its first claim, then links each lock to it.
    const pidFile = names.some((name) => /^\.owner\.lock\.\d+\.[0-9a-f-]+\.tmp$/.test(name))
    const locks = names.filter((name) => name.endsWith('.lock'))
    if (!pidFile) return `no store pid file in ${names.join(', ')}`
    // The session's own lock is there after the link; before it, only a lock an earlier kill left (a resume's).
    if (kill.link && locks.length === 0) return 'no lock file after the link'
    return undefined
  }
  if (kill.by === 'repair') {
    const events = lastLog(folders)
    const last = events?.at(-1)
    return last?.type === 'turn/end' && (last.data as { reason?: string }).reason === 'interrupted' ? undefined : `the log ends with ${last?.type ?? 'nothing'}`
  }
  if (kill.by === 'rewind') {
    const now = tree(folders.workspace)
    return isDeepStrictEqual(now, before) ? 'the workspace is as before the rewind' : isDeepStrictEqual(now, SEED) ? 'the rewind had finished' : undefined
  }
  return undefined
}

/** The top-level session's events, read straight from the folder (for a check right after a kill). */
function lastLog(folders: RunFolders): readonly SessionEvent[] | undefined {
  const names = existsSync(folders.sessions) ? readdirSync(folders.sessions).filter((name) => name.endsWith('.jsonl')) : []
  for (const name of names) {
    const [header, ...rest] = readFileSync(join(folders.sessions, name), 'utf8').split('\n').filter(Boolean)
    if (header === undefined || (JSON.parse(header) as { parentSessionId?: string }).parentSessionId !== undefined) continue
    return rest.flatMap((line) => {
      try {
        return [JSON.parse(line) as SessionEvent]
      } catch {
        return []
      }
    })
  }
  return undefined
}
