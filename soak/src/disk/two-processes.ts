/**
 * Two `rein` processes on one session: the model holds whichever process reaches it (a `wait_for`
 * call that waits for a file the test makes), so the other meets the lock while the first owns it.
 */
import type { MockReply, MockScript, RecordedRequest } from '@rein/testkit'

/** Which commands the two processes run and how they start: one after the other holds, or together. */
export type Variant = 'resume, then resume' | 'run --session, then resume' | 'resume, then run --session' | 'resume and resume together' | 'run --session and resume together'

export const VARIANTS: readonly Variant[] = [
  'resume, then resume', 'run --session, then resume', 'resume, then run --session', 'resume and resume together', 'run --session and resume together',
]

/** The argument lists of the two processes for `variant`, continuing session `id`. */
export function commandsOf(variant: Variant, id: string): [string[], string[]] {
  const resume = (text: string) => ['resume', '--yes', id, text]
  const run = (text: string) => ['run', '--yes', '--session', id, text]
  return variant.startsWith('run') ? [run('first'), resume('second')] : variant.includes('then run') ? [resume('first'), run('second')] : [resume('first'), resume('second')]
}

/**
 * A model that holds every turn (a `wait_for` call) until `release` exists, then answers; with
 * `release` undefined it answers at once (the turn that makes the session to share).
 */
export function holdingModel(release: string | undefined): MockScript {
  return (request: RecordedRequest, index: number): MockReply => {
    const messages = (request.body as { messages?: { role: string }[] } | undefined)?.messages ?? []
    if (release === undefined) return { steps: [{ text: 'Started.' }] }
    if (messages.at(-1)?.role === 'tool') return { steps: [{ text: 'Done.' }] }
    return { steps: [{ toolCall: { id: `call_hold_${index}`, name: 'wait_for', arguments: JSON.stringify({ file: release }) } }] }
  }
}

/** Resolves once `condition` holds (polled), or after `guardMs` whatever it says: a bound, not a timing check. */
export async function until(condition: () => boolean, guardMs: number): Promise<void> {
  const end = Date.now() + guardMs
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
}
