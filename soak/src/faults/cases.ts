/** The cases the suite runs: the fixed matrix (each fault alone) and seeded random sequences. */

import type { Rng } from '../plan.ts'
import type { Fault } from './catalog.ts'
import { retriedCode, type Item, type Route } from './oracle.ts'
import type { CancelAt } from './run-case.ts'
import type { AdapterRoute } from './stack.ts'

export interface Shape {
  label: string
  primary: AdapterRoute
  fallback: boolean
  turns: number
  queues: Record<Route, Item[]>
}

/** Adapter × fallback, in an order that a round-robin over faults spreads evenly. */
const COMBOS: readonly { primary: AdapterRoute; fallback: boolean }[] = [
  { primary: 'openai', fallback: true },
  { primary: 'deepseek', fallback: false },
  { primary: 'openai', fallback: false },
  { primary: 'deepseek', fallback: true },
]

/**
 * Each fault alone, on the first request of a one-turn session (`once`), and with `persistent` —
 * when the docs say it is retried — on every request to the primary until its retries run out. `combos` of
 * the four adapter × fallback pairings per fault, round-robin, so every pairing meets every kind.
 */
export function matrixShapes(catalog: readonly Fault[], options: { combos: number; persistent: boolean; maxRetries: number }): Shape[] {
  const { combos, maxRetries } = options
  const shapes: Shape[] = []
  catalog.forEach((fault, index) => {
    const persistent = options.persistent && 'code' in fault.effect && (!fault.effect.shown || fault.effect.takenBack === true) && retriedCode(fault.effect.code)
    for (let n = 0; n < Math.min(combos, COMBOS.length); n++) {
      const combo = COMBOS[(index + n) % COMBOS.length]!
      const name = `${fault.name} via ${combo.primary}${combo.fallback ? ' with fallback' : ''}`
      shapes.push({ label: `${name}, once`, ...combo, turns: 1, queues: { primary: [{ fault }], fallback: [] } })
      if (persistent) {
        const always = Array.from({ length: maxRetries + 1 }, () => ({ fault }))
        shapes.push({ label: `${name}, every retry`, ...combo, turns: 1, queues: { primary: always, fallback: [] } })
      }
    }
  })
  return shapes
}

/**
 * A random sequence: 1–3 turns in one session; the primary's replies a random run of faults and
 * healthy answers (some asking for a tool, so faults also land on later steps), the fallback's a
 * shorter one. At most four tool answers, so no turn reaches `maxSteps`.
 */
export function randomShape(rng: Rng, catalog: readonly Fault[], index: number): Shape {
  const combo = rng.pick(COMBOS)
  const pool = catalog.filter((fault) => !fault.matrixOnly)
  let tools = 4
  const item = (faultChance: number): Item => {
    if (rng.chance(faultChance)) return { fault: rng.pick(pool) }
    if (tools > 0 && rng.chance(0.5)) {
      tools--
      return { healthy: 'tool' }
    }
    return { healthy: 'text' }
  }
  const primary = Array.from({ length: rng.int(9) }, () => item(0.7))
  const fallback = combo.fallback ? Array.from({ length: rng.int(4) }, () => item(0.5)) : []
  const turns = 1 + rng.int(3)
  const names = (items: readonly Item[]) => items.map((entry) => 'fault' in entry ? entry.fault.name : entry.healthy).join(' → ') || 'healthy'
  return {
    label: `sequence #${index} via ${combo.primary}${combo.fallback ? ' with fallback' : ''}, ${turns} turn(s): primary [${names(primary)}]${combo.fallback ? `, fallback [${names(fallback)}]` : ''}`,
    ...combo, turns, queues: { primary, fallback },
  }
}

/** A random moment: within the uncancelled run's time, or on one of the turn's first agent events. */
export function randomCancel(rng: Rng, elapsedMs: number): CancelAt {
  return rng.chance(0.5) ? { afterMs: rng.int(Math.max(1, Math.round(elapsedMs * 1.1))) } : { onEvent: rng.int(12) }
}

export function describeCancel(cancel: CancelAt): string {
  return 'afterMs' in cancel ? `cancel after ${cancel.afterMs} ms` : `cancel on agent event #${cancel.onEvent}`
}
