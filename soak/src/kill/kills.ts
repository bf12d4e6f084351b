/**
 * Where a process is killed: by the test (after a delay, after a number of output lines) or by the
 * kill plugin inside it (at a flush, inside a lock claim, after a repair, inside a rewind).
 */

import type { Rng } from '../plan.ts'
import type { OuterKill } from '../rein-process.ts'

export type Kill =
  | { by: 'delay'; ms: number }
  | { by: 'lines'; n: number }
  | { by: 'flush'; n: number }
  | { by: 'lock'; link: boolean }
  | { by: 'repair' }
  | { by: 'rewind'; n: number; before: boolean }

/** What the test does itself, if anything. */
export function outerKill(kill: Kill | undefined): OuterKill | undefined {
  if (kill?.by === 'delay') return { afterMs: kill.ms }
  if (kill?.by === 'lines') return { afterLines: kill.n }
  return undefined
}

/** REIN_SOAK_KILL for the plugin, if it does the killing. */
export function pluginKill(kill: Kill | undefined): string {
  if (!kill || kill.by === 'delay' || kill.by === 'lines') return ''
  const { by, ...rest } = kill
  return JSON.stringify({ at: by, ...rest })
}

/** A short name for reports. */
export function describeKill(kill: Kill): string {
  switch (kill.by) {
    case 'delay': return `after ${kill.ms} ms`
    case 'lines': return `after ${kill.n} output lines`
    case 'flush': return `at flush ${kill.n}`
    case 'lock': return kill.link ? 'inside a lock claim, after the link' : 'inside a lock claim, before the link'
    case 'repair': return 'right after a repair was durable'
    case 'rewind': return `${kill.before ? 'before' : 'after'} a rewind's file operation ${kill.n}`
  }
}

/**
 * A random kill of a `rein run` or `rein resume`. The ranges cover a whole run on this machine
 * (about 1.5 s of start-up, then some 20 flushes and 16 lines of output over 1–2 s); a kill that
 * would come after the process ended does not land and is not counted.
 */
export function randomKill(rng: Rng): Kill {
  switch (rng.int(3)) {
    case 0: return { by: 'delay', ms: 800 + rng.int(3_200) }
    case 1: return { by: 'lines', n: 1 + rng.int(16) }
    default: return { by: 'flush', n: 1 + rng.int(22) }
  }
}
