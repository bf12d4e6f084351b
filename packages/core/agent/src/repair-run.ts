/**
 * A repair's run that no turn takes. A repair names the agent's next run before it continues the
 * subagents a crash or an interrupt left working, and they report to that run; the next turn is
 * that run and carries what they spent (after a failed resume, the retry's first turn). When no
 * turn comes (the agent is closed or its service disposed first, or a failed resume is not
 * retried), the run is told as one of its own — `agent/repair-start` and `-end` — or the
 * children's spend would be counted in no run. It is numbered with the turn it follows, as a
 * compaction between turns is.
 */

import { isReinError } from '@rein/base'
import type { Session } from '@rein/session'
import { latestUserMessage, runIdentity, type ParentRun } from './identity.ts'
import type { Notify } from './lifecycle.ts'
import type { NextRun } from './tree-budget.ts'

/** Where the run was: the agent's name, its session (read for its id and turns only: a failed resume's is closed by then) and its parent run. */
export interface RepairRunPlace {
  agent: string
  session: Session
  parent?: ParentRun | undefined
}

/**
 * Tells `next` as a run of its own when its repair continued subagents: ones that spent anything,
 * or any named as its child (their records wait for it as their parent); `error` when that repair failed.
 */
export function tellUntakenRun(notify: Notify, next: NextRun, place: RepairRunPlace): void {
  if (!next.spent.any && !next.named) return
  const { session, parent } = place
  const turn = session.turns
  const identity = runIdentity({
    agent: place.agent, sessionId: session.id, turn, runId: next.runId, anchor: latestUserMessage(session.messages()), ...(parent ? { parent } : {}),
  })
  const { startedAt, failed } = next
  const endedAt = next.endedAt ?? Date.now()
  notify('agent/repair-start', () => ({ identity, turn, startedAt }))
  notify('agent/repair-end', () => failed === undefined
    ? { identity, turn, startedAt, endedAt, reason: 'completed' }
    : { identity, turn, startedAt, endedAt, reason: 'error', errorCode: isReinError(failed.error) ? failed.error.code : 'INTERNAL_ERROR' })
}
