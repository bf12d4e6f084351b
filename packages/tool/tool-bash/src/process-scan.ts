/**
 * Finds the live processes of one command by reading /proc: its process group and session, any
 * process carrying its marker in the environment (one that left the group with `setsid`), and the
 * descendants of all of those. Linux only; elsewhere it finds nothing beyond the group.
 */

import { groupsMadeBy, hasEnvironmentEntry, listProcesses, readProcess, withDescendants } from '@rein/base'
import { MARKER_VARIABLE, type ShellProcess } from './shell.ts'

/** What a scan found: the processes, and the process groups to signal as wholes. */
export interface ScanResult {
  pids: number[]
  /**
   * The recorded group when it counts, and every group a marked process is in that the command's
   * processes made (`groupsMadeBy`). Never 0, 1 or rein's own.
   */
  groups: number[]
}

/**
 * The pids of every live (not zombie) process that belongs to `target`, in no particular order.
 * With `trustGroup: false` (a command recorded earlier, whose group number may have been reused
 * since) the group and session count only while a process carrying the marker is still in them.
 */
export function findProcesses(target: Pick<ShellProcess, 'processGroup' | 'marker'>, options: { trustGroup?: boolean } = {}): number[] {
  return scanProcesses(target, options).pids
}

/** `findProcesses`, with the groups a stop signals as wholes. */
export function scanProcesses(target: Pick<ShellProcess, 'processGroup' | 'marker'>, options: { trustGroup?: boolean } = {}): ScanResult {
  const own = readProcess(process.pid)?.group
  const entries = listProcesses() ?? []
  const marker = `${MARKER_VARIABLE}=${target.marker}`
  const marked = entries.filter((entry) => hasEnvironmentEntry(entry.pid, marker))
  const group = target.processGroup
  const groupIsOurs = options.trustGroup !== false || marked.some((entry) => entry.group === group || entry.session === group)
  // Never 0 or 1: those numbers name no command's group.
  const trusted = groupIsOurs && group > 1
  const roots = marked.map((entry) => entry.pid)
  if (trusted) for (const entry of entries) if (entry.group === group || entry.session === group) roots.push(entry.pid)
  // Descendants: a child that cleared its environment while its parent still runs is still ours.
  const found = withDescendants(roots, entries)
  // kill(-0) and kill(-1) would reach far more than the command; rein's own group, rein itself.
  const groups = new Set(groupsMadeBy(marked, found, trusted ? new Set([group]) : new Set(), own))
  if (trusted && group !== own) groups.add(group)
  return { pids: [...found], groups: [...groups] }
}
