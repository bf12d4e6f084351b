/**
 * The process table as Linux's /proc shows it, for the packages that must find what a command
 * started (tool-bash), what a dead rein left running (jobs), or whether a lock's owner still runs
 * (session-jsonl). Elsewhere there is no table: `listProcesses` answers undefined.
 */

import { readdirSync, readFileSync } from 'node:fs'
import { readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'

/** A live process: its parent, process group and session. */
export interface ProcessEntry {
  pid: number
  ppid: number
  group: number
  session: number
  /** When it started, in clock ticks after boot (stat field 22): a pid reused later has another. */
  startTime: number
}

/** Every live process but this one; undefined when there is no readable process table. */
export function listProcesses(proc = '/proc'): ProcessEntry[] | undefined {
  let names: string[]
  try {
    names = readdirSync(proc)
  } catch {
    return undefined
  }
  const entries: ProcessEntry[] = []
  for (const name of names) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue
    const entry = readProcess(pid, proc)
    if (entry) entries.push(entry)
  }
  return entries
}

/**
 * `pid (comm) state ppid pgrp session …`; comm may hold spaces and parentheses, so the fields are
 * split after the last `)`. Undefined for a process that is gone or a zombie: it has already
 * exited, only its parent can remove it, and signals do nothing to it.
 */
export function readProcess(pid: number, proc = '/proc'): ProcessEntry | undefined {
  let stat: string
  try {
    stat = readFileSync(`${proc}/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const [state, ppid, group, session] = fields
  if (state === 'Z' || state === 'X' || state === undefined) return undefined
  // Fields from the third (state) on: the start time is the 22nd.
  return { pid, ppid: Number(ppid), group: Number(group), session: Number(session), startTime: Number(fields[22 - 3]) }
}

/** The pids of `roots` and of every process in `entries` descending from one of them. */
export function withDescendants(roots: Iterable<number>, entries: readonly ProcessEntry[]): Set<number> {
  const found = new Set(roots)
  for (let grew = found.size > 0; grew;) {
    grew = false
    for (const entry of entries) {
      if (!found.has(entry.pid) && found.has(entry.ppid)) {
        found.add(entry.pid)
        grew = true
      }
    }
  }
  return found
}

/**
 * The process groups of `members` that are theirs to signal whole: a group led by one of `ours`, or
 * lying in a session led by one of them or in a `trusted` one (a process joins only groups of its own
 * session, so every group of a session they made is theirs). A group a member merely stayed in (the
 * one of whoever started rein, say) is not. Never 0, 1 (kill(-1) reaches every process this user may
 * signal) nor `own`.
 */
export function groupsMadeBy(members: readonly ProcessEntry[], ours: ReadonlySet<number>, trusted: ReadonlySet<number>, own: number | undefined): number[] {
  const made = (entry: ProcessEntry) => ours.has(entry.group) || ours.has(entry.session) || trusted.has(entry.session)
  return [...new Set(members.filter(made).map((entry) => entry.group))].filter((group) => group > 1 && group !== own)
}

/** Whether a process exists only as a zombie (killed, not yet reaped by its parent). */
export function isZombie(pid: number, proc = '/proc'): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`${proc}/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Whether the process's environment holds exactly `entry` (`NAME=value`); false when it cannot be read. */
export function hasEnvironmentEntry(pid: number, entry: string, proc = '/proc'): boolean {
  return environmentEntriesOf(pid, [entry], proc).length > 0
}

/** Which of `entries` (`NAME=value` each) the process's environment holds exactly, read once; none when it cannot be read. */
export function environmentEntriesOf(pid: number, entries: readonly string[], proc = '/proc'): string[] {
  let environment: Buffer
  try {
    environment = readFileSync(`${proc}/${pid}/environ`)
  } catch {
    return [] // not ours to read, or gone
  }
  return entries.filter((entry) => {
    const exact = Buffer.from(`${entry}\0`)
    return environment.subarray(0, exact.length).equals(exact) || environment.includes(Buffer.from(`\0${entry}\0`))
  })
}

/**
 * Whether a process with this pid is running: one another user owns counts (it cannot be signalled,
 * but it exists); a zombie does not (it has exited and holds nothing, only its parent can reap it).
 */
export function isProcessAlive(pid: number, proc = '/proc'): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM'
  }
  return !isZombie(pid, proc)
}

/**
 * The names among `names` that are temporary files left by a process that is gone. `writerOf` gives
 * the pid a caller's own temporary name carries, undefined for every other name. This process's
 * files and a live process's are kept: either may be writing them now.
 */
export function leftByGoneProcesses(names: Iterable<string>, writerOf: (name: string) => number | undefined): string[] {
  const gone: string[] = []
  for (const name of names) {
    const pid = writerOf(name)
    if (pid === undefined || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue
    if (!isProcessAlive(pid)) gone.push(name)
  }
  return gone
}

/**
 * Removes from `folder` the temporary files `leftByGoneProcesses` picks out: what killed processes
 * left beside the files they were writing. Best effort: what cannot be listed or removed stays.
 */
export async function removeLeftByGoneProcesses(folder: string, writerOf: (name: string) => number | undefined): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[])
  for (const name of leftByGoneProcesses(names, writerOf)) await unlink(join(folder, name)).catch(() => undefined)
}
