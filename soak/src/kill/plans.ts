/** The sessions the kill suite runs: the rare points, each its own deterministic case, then random kills. */

import type { Rng } from '../plan.ts'
import { randomKill, type Kill } from './kills.ts'
import type { SessionPlan } from './session.ts'

/**
 * Kills a random instant rarely hits. Flush 4 of a `rein run` is the one that makes the `note`
 * call's intent durable: the repair after it runs `note` again (it is replay-safe), so a kill right
 * after that repair is durable checks the call is not run a third time.
 */
export const RARE_PLANS: readonly SessionPlan[] = [
  {
    label: 'rare: rein run killed inside the lock claim of its new session, before the link, then after it; rein rewind killed before its 2nd file operation, then after its 1st',
    kills: [{ by: 'lock', link: false }, { by: 'lock', link: true }],
    rewindKills: [{ by: 'rewind', n: 2, before: true }, { by: 'rewind', n: 1, before: false }],
  },
  {
    label: 'rare: rein resume killed inside the lock claim, before the link, then right after its repair was durable',
    kills: [{ by: 'flush', n: 4 }, { by: 'lock', link: false }, { by: 'repair' }],
  },
]

/** How many rare kills the rare plans hold. */
export const RARE_KILLS = RARE_PLANS.reduce((sum, plan) => sum + plan.kills.filter(isRare).length + (plan.rewindKills?.length ?? 0), 0)

function isRare(kill: Kill): boolean {
  return kill.by === 'lock' || kill.by === 'repair' || kill.by === 'rewind'
}

/** A session killed one to three times at random (its `rein run`, then its resumes). */
export function randomPlan(rng: Rng, index: number): SessionPlan {
  const kills = Array.from({ length: 1 + rng.int(3) }, () => randomKill(rng))
  return { label: `random #${index}`, kills }
}
