/** What the kill suite counts over all its sessions; every problem also leaves a line in `details`. */

export interface Tally {
  sessions: number
  processes: number
  /** Kills that landed (the process died by SIGKILL), by where they were aimed. */
  landed: Record<string, number>
  /** Landed kills of a `rein resume`. */
  resumesKilled: number
  /** A `rein run` killed before its log existed (it is started again, as a person would). */
  runsBeforeLog: number
  loadFailures: number
  invariantViolations: number
  unsafeRepeated: number
  /** Non-replay-safe effects seen (bash appends, `write`/`edit` dispatches): what `unsafeRepeated` looked at. */
  unsafeEffects: number
  safeRerunTwice: number
  safeLeftUnknown: number
  userLost: number
  rewindFailed: number
  locksLeft: number
  processesLeft: number
  failedUnkilled: number
  incomplete: number
  details: string[]
}

export function newTally(): Tally {
  return {
    sessions: 0, processes: 0, landed: {}, resumesKilled: 0, runsBeforeLog: 0, loadFailures: 0,
    invariantViolations: 0, unsafeRepeated: 0, unsafeEffects: 0, safeRerunTwice: 0, safeLeftUnknown: 0, userLost: 0, rewindFailed: 0,
    locksLeft: 0, processesLeft: 0, failedUnkilled: 0, incomplete: 0, details: [],
  }
}

/** Kills of the kinds a random instant hits that landed (by delay, output line or flush). */
export function randomLanded(tally: Tally): number {
  return (tally.landed.delay ?? 0) + (tally.landed.lines ?? 0) + (tally.landed.flush ?? 0)
}

/** Kills at the rare points (a lock claim, a durable repair, a rewind) that landed. */
export function rareLanded(tally: Tally): number {
  return (tally.landed.lock ?? 0) + (tally.landed.repair ?? 0) + (tally.landed.rewind ?? 0)
}
