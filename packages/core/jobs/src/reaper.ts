/**
 * Stops what a dead process left running, from what its jobs recorded. Nothing is signalled on
 * the strength of a number alone: a process is ours only while its environment (read from
 * `/proc/<pid>/environ`) carries the job's marker, and a recorded group is killed only while a
 * marked process is still in it. Linux only: elsewhere nothing can be checked, so nothing is killed.
 */

import { readFileSync, readdirSync } from 'node:fs'
import type { JobRecord } from './types.ts'

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
export function reapRecorded(records: readonly JobRecord[], options: ReapOptions = {}): ReapReport {
  const proc = options.proc ?? '/proc'
  const markers = new Set(records.map((record) => record.marker).filter((marker): marker is string => isMarker(marker)))
  const report: ReapReport = { pids: [], groups: [], checked: false }
  if (markers.size === 0) return report
  const marked = findMarked(proc, markers)
  if (!marked) return report
  report.checked = true
  for (const record of records) {
    if (!isMarker(record.marker)) continue
    const pids = marked.get(record.marker) ?? []
    const group = record.processGroup
    // Never 0 or 1: kill(-1) would signal every process this user may signal.
    if (group !== undefined && group > 1 && pids.some((pid) => groupOf(proc, pid) === group) && signal(-group)) report.groups.push(group)
    for (const pid of pids) if (signal(pid)) report.pids.push(pid)
  }
  return report
}

/** A usable marker: `NAME=value`, no NUL, bounded. */
export function isMarker(marker: unknown): marker is string {
  return typeof marker === 'string' && /^[A-Za-z_][A-Za-z0-9_]*=.+$/s.test(marker) && !marker.includes('\0') && marker.length <= 512
}

/** Pids by the marker their environment carries; undefined when the process table cannot be read. */
function findMarked(proc: string, markers: ReadonlySet<string>): Map<string, number[]> | undefined {
  let names: string[]
  try {
    names = readdirSync(proc)
  } catch {
    return undefined
  }
  const found = new Map<string, number[]>()
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    let environment: string
    try {
      environment = readFileSync(`${proc}/${name}/environ`, 'utf8')
    } catch {
      continue // gone meanwhile, or another user's
    }
    for (const entry of environment.split('\0')) {
      if (!markers.has(entry)) continue
      const pids = found.get(entry) ?? []
      pids.push(Number(name))
      found.set(entry, pids)
    }
  }
  return found
}

/** The process group of `pid` (field 5 of /proc/<pid>/stat, after the parenthesised command). */
function groupOf(proc: string, pid: number): number | undefined {
  try {
    const stat = readFileSync(`${proc}/${pid}/stat`, 'latin1')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const group = Number(fields[2])
    return Number.isSafeInteger(group) ? group : undefined
  } catch {
    return undefined
  }
}

function signal(target: number): boolean {
  try {
    process.kill(target, 'SIGKILL')
    return true
  } catch {
    return false // already gone
  }
}
