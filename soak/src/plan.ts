/**
 * How big a run is. `pnpm test` runs each suite's fast subset; `pnpm soak` sets REIN_SOAK=full and
 * runs the same files at full size. Every random choice comes from a seed, printed on failure, so a
 * failing run can be replayed with REIN_SOAK_SEED.
 */

import { seededRandom } from '@rein/testkit'

/** True under `pnpm soak`. */
export const FULL = process.env.REIN_SOAK === 'full'

/**
 * `fast` in `pnpm test`, `full` under `pnpm soak`; `REIN_SOAK_<NAME>` (upper case, `-` as `_`)
 * overrides either, e.g. REIN_SOAK_KILLS=50.
 */
export function size(name: string, fast: number, full: number): number {
  const override = process.env[`REIN_SOAK_${name.toUpperCase().replaceAll('-', '_')}`]
  if (override !== undefined && /^\d+$/.test(override)) return Number(override)
  return FULL ? full : fast
}

/** A suite's seed: REIN_SOAK_SEED when set, else the suite's own fixed one (runs are reproducible). */
export function seedOf(fixed: number): number {
  const given = process.env.REIN_SOAK_SEED
  return given !== undefined && /^\d+$/.test(given) ? Number(given) : fixed
}

/** A seeded generator with the helpers the suites share. */
export interface Rng {
  readonly seed: number
  /** A float in [0, 1). */
  next(): number
  /** An integer in [0, n). */
  int(n: number): number
  /** One element of `items`. */
  pick<T>(items: readonly T[]): T
  /** True with probability `p`. */
  chance(p: number): boolean
}

/** A generator for `seed` (mulberry32 from the testkit). */
export function rng(seed: number): Rng {
  const next = seededRandom(seed)
  const int = (n: number) => Math.floor(next() * n)
  return {
    seed,
    next,
    int,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list')
      return items[int(items.length)]!
    },
    chance: (p) => next() < p,
  }
}

/** A test's time limit: `fastMs` in `pnpm test`; an hour under `pnpm soak`. Not a timing check, a hang guard. */
export function limit(fastMs: number): number {
  return FULL ? 3_600_000 : fastMs
}
