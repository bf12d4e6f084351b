/**
 * Stops what a dead process left running, from what its jobs recorded. Nothing is signalled on
 * the strength of a number alone: a process is ours only while its environment (read from
 * `/proc/<pid>/environ`) carries the job's marker, and a recorded group is killed only while a
 * marked process is still in it, or its leader is the very process recorded (same start time). Linux
 * only: elsewhere nothing can be checked, so nothing is killed.
 */

import { environmentEntriesOf, listProcesses, readProcess, type ProcessEntry } from '@rein/base'
import type { LoggedRecord } from './job-log.ts'

export interface ReapOptions {
  /** Where the process table is mounted; tests may point elsewhere. Default `/proc`. */
  proc?: string
}

/** What a reap did: the processes and groups it sent SIGKILL, and whether it could look at all. */
export interface ReapReport {
  pids: number[]
  groups: number[]
  /** False where there is no readable process table (not Linux): nothing was checked or killed. */
  checked: boolean
}

/** Kills every live process carrying a recorded marker, and each recorded group that still holds one. */
export function reapRecorded(records: readonly LoggedRecord[], options: ReapOptions = {}): ReapReport {
  const proc = options.proc ?? '/proc'
  const markers = new Set(records.map((record) => record.marker).filter((marker): marker is string => isMarker(marker)))
  const report: ReapReport = { pids: [], groups: [], checked: false }
  if (markers.size === 0) return report
  const marked = findMarked(proc, markers)
  if (!marked) return report
  report.checked = true
  for (const record of records) {
    if (!isMarker(record.marker)) continue
    const processes = marked.get(record.marker) ?? []
    const group = record.processGroup
    // Never 0 or 1: kill(-1) would signal every process this user may signal.
    const ours = processes.some((entry) => entry.group === group) || (group !== undefined && sameLeader(group, record.leaderStart, proc))
    if (group !== undefined && group > 1 && ours && signal(-group)) report.groups.push(group)
    for (const { pid } of processes) if (signal(pid)) report.pids.push(pid)
  }
  return report
}

/** A usable marker: `NAME=value`, no NUL, bounded. */
export function isMarker(marker: unknown): marker is string {
  return typeof marker === 'string' && /^[A-Za-z_][A-Za-z0-9_]*=.+$/s.test(marker) && !marker.includes('\0') && marker.length <= 512
}

/** Live processes by the marker their environment carries; undefined when the process table cannot be read. */
function findMarked(proc: string, markers: ReadonlySet<string>): Map<string, ProcessEntry[]> | undefined {
  const entries = listProcesses(proc)
  if (!entries) return undefined
  const found = new Map<string, ProcessEntry[]>([...markers].map((marker) => [marker, []]))
  // Each environment read once, however many jobs a long session has to check.
  const wanted = [...markers]
  for (const entry of entries) for (const marker of environmentEntriesOf(entry.pid, wanted, proc)) found.get(marker)?.push(entry)
  return found
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
