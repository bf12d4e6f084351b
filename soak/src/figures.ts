/**
 * What a suite counted, for docs/reliability.md. Each suite publishes its figures once per run; under
 * `pnpm soak` they are written as JSON to REIN_SOAK_OUT and soak/report.mjs turns them into the doc.
 * Outside it (`pnpm test`) publishing writes nothing: the fast subset asserts, it does not report.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FULL } from './plan.ts'

/** One counted thing: what it is, its value, and what the suite requires of it (when anything). */
export interface Figure {
  readonly label: string
  readonly value: number | string
  /** The suite fails unless `value` equals this. */
  readonly must?: number
  /** The suite fails unless `value` is at least this: proof the run did what it claims (kills landed, races met). */
  readonly atLeast?: number
}

/** One suite's report. */
export interface SuiteReport {
  /** File name and order key, e.g. `1-kill`. */
  readonly id: string
  readonly title: string
  /** What was run, in one sentence with its sizes. */
  readonly ran: string
  readonly seed?: number
  readonly figures: readonly Figure[]
  /** What a user may rely on, in one or two sentences; only true if every `must` holds. */
  readonly promise: string
}

/** Figures whose value is not what they must be; a suite asserts this is empty. */
export function broken(figures: readonly Figure[]): Figure[] {
  return figures.filter((figure) => (figure.must !== undefined && figure.value !== figure.must)
    || (figure.atLeast !== undefined && !(typeof figure.value === 'number' && figure.value >= figure.atLeast)))
}

/** Writes `report` to REIN_SOAK_OUT (under `pnpm soak`); a no-op otherwise. */
export function publish(report: SuiteReport): void {
  const out = process.env.REIN_SOAK_OUT
  if (!out) return
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, `${report.id}.json`), JSON.stringify({ ...report, full: FULL }, null, 2))
}
