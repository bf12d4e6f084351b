/**
 * Stops what a dead process left running, from what its jobs recorded. Nothing is signalled on
 * the strength of a number alone: a process is ours while its environment (read from
 * `/proc/<pid>/environ`) carries the job's marker, or it descends from one that does, or is in a
 * marked process's group; a recorded group is killed only while a marked process is still in it,
 * or its leader is the very process recorded (same start time). Linux only: elsewhere nothing can
 * be checked, so nothing is killed.
 */

import { environmentEntriesOf, groupsMadeBy, listProcesses, readProcess, withDescendants, type ProcessEntry } from '@rein/base'
import type { LoggedRecord } from './job-log.ts'

export interface ReapOptions {
  /** Where the process table is mounted; tests may point elsewhere. Default `/proc`. */
  proc?: string
}

/** What a reap did: the processes and groups it sent SIGKILL, and whether it could look at all. */
export interface ReapReport {
  pids: number[]
  groups: number[]
  /** The indexes, in the records given, of those something was sent SIGKILL for. */
  hit: number[]
  /** False where there is no readable process table (not Linux): nothing was checked or killed. */
  checked: boolean
}

/**
 * Kills every live process carrying a recorded marker and every descendant of one (one that cleared
 * its environment, `env -i`, is still the job's), the process groups they made, and each recorded
 * group that still holds one (or whose leader is the process recorded).
 */
export function reapRecorded(records: readonly LoggedRecord[], options: ReapOptions = {}): ReapReport {
  const proc = options.proc ?? '/proc'
  const markers = new Set(records.map((record) => record.marker).filter((marker): marker is string => isMarker(marker)))
  const report: ReapReport = { pids: [], groups: [], hit: [], checked: false }
  if (markers.size === 0) return report
  const table = findMarked(proc, markers)
  if (!table) return report
  report.checked = true
  const own = readProcess(process.pid, proc)?.group
  for (const [index, record] of records.entries()) {
    if (!isMarker(record.marker)) continue
    const signalled = report.pids.length + report.groups.length
    const processes = table.marked.get(record.marker) ?? []
    const group = record.processGroup
    const recorded = group !== undefined && (processes.some((entry) => entry.group === group) || sameLeader(group, record.leaderStart, proc)) ? [group] : []
    const ours = withDescendants(processes.map((entry) => entry.pid), table.entries)
    // The groups the job's processes made (a `setsid` child's), whatever in them cleared its
    // environment; not one a marked process only stayed in, which may be whoever started rein.
    const groups = new Set(groupsMadeBy(processes, ours, new Set(recorded), own))
    for (const number of recorded) if (number > 1 && number !== own) groups.add(number)
    for (const number of groups) if (signal(-number)) report.groups.push(number)
    for (const pid of ours) if (signal(pid)) report.pids.push(pid)
    if (report.pids.length + report.groups.length > signalled) report.hit.push(index)
  }
  return report
}

/** A usable marker: `NAME=value`, no NUL, bounded. */
export function isMarker(marker: unknown): marker is string {
  return typeof marker === 'string' && /^[A-Za-z_][A-Za-z0-9_]*=.+$/s.test(marker) && !marker.includes('\0') && marker.length <= 512
}

/** Live processes by the marker their environment carries, and the whole table; undefined when it cannot be read. */
function findMarked(proc: string, markers: ReadonlySet<string>): { marked: Map<string, ProcessEntry[]>; entries: ProcessEntry[] } | undefined {
  const entries = listProcesses(proc)
  if (!entries) return undefined
  const marked = new Map<string, ProcessEntry[]>([...markers].map((marker) => [marker, []]))
  // Each environment read once, however many jobs a long session has to check.
  const wanted = [...markers]
  for (const entry of entries) for (const marker of environmentEntriesOf(entry.pid, wanted, proc)) marked.get(marker)?.push(entry)
  return { marked, entries }
}


/**
 * The start time of the process leading `group`, when it is alive and leads it: kept with a recorded
 * group, it tells that group from a later one of the same number. A process that rewrites its title
 * (nginx, postgres, `perl $0=`) loses the marker in its environment, not the group it was started in.
 */
export function leaderStartOf(group: number, proc = '/proc'): number | undefined {
  const leader = readProcess(group, proc)
  return leader?.group === group ? leader.startTime : undefined
}

/** Whether `group` is still led by the process recorded as its leader: same pid, same start time. */
function sameLeader(group: number, leaderStart: number | undefined, proc: string): boolean {
  return leaderStart !== undefined && leaderStartOf(group, proc) === leaderStart
}

function signal(target: number): boolean {
  try {
    process.kill(target, 'SIGKILL')
    return true
  } catch {
    return false // already gone
  }
}
