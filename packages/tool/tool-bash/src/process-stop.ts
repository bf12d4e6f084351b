/**
 * Stops every process of a command: SIGTERM to its groups and to each process found by marker or
 * descent, a grace period, then SIGKILL to the groups (the recorded one always, while it exists: a
 * fork bomb keeps forking until the whole group is killed at once) and to whatever a scan still finds.
 */

import { setTimeout as sleep } from 'node:timers/promises'
import { scanProcesses, type ScanResult } from './process-scan.ts'
import type { ShellProcess } from './shell.ts'

type Target = Pick<ShellProcess, 'processGroup' | 'marker'>

const POLL_MS = 20
/** SIGKILL rounds before giving up on a process the kernel will not let go (stuck in uninterruptible I/O). */
const KILL_ROUNDS = 100

/** How much to trust a process group number: see `findProcesses`. */
type ScanOptions = { trustGroup?: boolean }

/**
 * Stops everything left of `target` and resolves to how many processes the first scan found (0:
 * nothing was running, and nothing was signalled). Never rejects.
 */
export async function stopProcesses(target: Target, graceMs: number, options: ScanOptions = {}): Promise<number> {
  const first = scanProcesses(target, options)
  const group = groupSignalled(target, options)
  if (first.pids.length === 0 && !(group && groupExists(target.processGroup))) return 0
  signalAll(target, first, 'SIGTERM', options)
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    await sleep(POLL_MS)
    if (scanProcesses(target, options).pids.length === 0) break
  }
  await killAll(target, options)
  return first.pids.length
}

/**
 * SIGKILL until a scan finds nothing (or the rounds run out). The group gets it at least once
 * while it exists: a scan of /proc can miss a process that is being forked, a group kill cannot.
 */
async function killAll(target: Target, options: ScanOptions): Promise<void> {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const left = scanProcesses(target, options)
    const group = round === 0 && groupSignalled(target, options) && groupExists(target.processGroup)
    if (left.pids.length === 0 && !group) return
    signalAll(target, left, 'SIGKILL', options)
    await sleep(round === 0 ? 0 : POLL_MS)
  }
}

/** For `process.on('exit')`, where nothing asynchronous runs: SIGKILL the group, then what a few scans find. */
export function killAllNow(target: Target): void {
  signalAll(target, { pids: [], groups: [] }, 'SIGKILL', {})
  for (let round = 0; round < 3; round++) {
    const left = scanProcesses(target)
    if (left.pids.length === 0) return
    signalAll(target, left, 'SIGKILL', {})
  }
}

/**
 * Whole groups first, each in one call (a forking process cannot outrun it), then each process
 * found. The recorded group only when trusted and above 1: kill(0) and kill(-1) would reach far
 * more than the command; the others are groups a scan saw a marked process in.
 */
function signalAll(target: Target, found: ScanResult, signal: NodeJS.Signals, options: ScanOptions) {
  const groups = new Set(found.groups)
  if (groupSignalled(target, options)) groups.add(target.processGroup)
  for (const group of groups) send(-group, signal)
  for (const pid of found.pids) send(pid, signal)
}

function groupSignalled(target: Target, options: ScanOptions): boolean {
  return options.trustGroup !== false && target.processGroup > 1
}

/** Whether any process (a zombie too) is still in the group: its number cannot be reused until none is. */
function groupExists(group: number): boolean {
  try {
    process.kill(-group, 0)
    return true
  } catch {
    return false
  }
}

function send(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal)
  } catch {
    // ESRCH: already gone. EPERM: not ours to signal (another user's process that reused the pid).
  }
}
