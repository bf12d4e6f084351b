/**
 * The marker every process of a call carries (`REIN_BASH_CALL=<marker>`), derived from the session
 * and the call id: a later process that has only the session log can find what a crash left running.
 */

import { createHash, randomBytes } from 'node:crypto'

/** Markers of the commands this process runs now. */
const inUse = new Set<string>()

/** The first 32 hex digits of sha256("<sessionId>/<callId>"). */
export function callMarker(sessionId: string, callId: string): string {
  return createHash('sha256').update(`${sessionId}/${callId}`).digest('hex').slice(0, 32)
}

/** A call's marker, held until `release`. */
export interface ClaimedMarker {
  readonly marker: string
  readonly release: () => void
}

/**
 * The call's derived marker; a random one outside a session (nothing could recover the call), or
 * while another command of this process holds the same one (a caller reusing a call id), so one
 * command's cleanup never reaches another's processes.
 */
export function claimMarker(run: { readonly sessionId?: string; readonly callId: string }): ClaimedMarker {
  const derived = run.sessionId === undefined ? undefined : callMarker(run.sessionId, run.callId)
  const marker = derived !== undefined && !inUse.has(derived) ? derived : randomBytes(16).toString('hex')
  inUse.add(marker)
  return { marker, release: () => inUse.delete(marker) }
}
