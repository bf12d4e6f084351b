/**
 * The mock model's side of a disk-suite run: it asks for `bulk` calls step after step (so the log
 * keeps growing), injects the fault at a chosen request — when everything before it is durable —
 * and, once the test has undone the fault, answers in plain text so a resume completes.
 */
import type { MockReply, MockScript, RecordedRequest } from '@rein/testkit'
import type { Rng } from '../plan.ts'

/** How many steps a run may take after its fault before the model gives up and answers. */
const STEPS_AFTER_FAULT = 60

export interface FaultingModel {
  readonly script: MockScript
  /** The fault has been injected. */
  readonly faulted: boolean
  /** From now on every request gets a plain answer (the fault is undone; a resume should complete). */
  answer(): void
}

/**
 * A model that injects `fault` on request `faultAt` (0-based), just before replying to it. `sizes`
 * picks each `bulk` result's size.
 */
export function faultingModel(random: Rng, faultAt: number, fault: () => void, sizes: (afterFault: boolean) => number): FaultingModel {
  let faulted = false
  let answering = false
  let calls = 0
  let faultIndex = -1
  const script = (_request: RecordedRequest, index: number): MockReply => {
    if (answering) return { steps: [{ text: 'Recovered.' }] }
    if (index === faultAt) {
      faulted = true
      faultIndex = index
      fault()
    }
    if (faulted && index - faultIndex >= STEPS_AFTER_FAULT) return { steps: [{ text: 'Done without a fault.' }] }
    // Sometimes two calls in one step, so a batch holds more than one result.
    const count = random.chance(0.25) ? 2 : 1
    return {
      steps: Array.from({ length: count }, () => ({
        toolCall: { id: `call_${++calls}`, name: 'bulk', arguments: JSON.stringify({ size: sizes(faulted) }) },
      })),
    }
  }
  return {
    script,
    get faulted() { return faulted },
    answer: () => { answering = true },
  }
}
