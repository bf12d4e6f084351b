/**
 * A background child whose process died (jobs reaped its job as `lost`): its log, and those of the
 * children it had, are closed as interrupted — every open call paired, the turn ended — so each
 * records a terminal state. Nothing runs here (no `recover`, no rerun): `resume` continues it later.
 */

import { isClean, planRepair, repairEvents, type SessionService } from '@rein/session'

export async function closeLostChild(sessions: SessionService, id: string): Promise<void> {
  const session = await sessions.open(id)
  try {
    const plan = planRepair(session.events, () => false)
    if (isClean(plan)) return
    for (const draft of repairEvents(plan)) session.append(draft.type, draft.data)
    await session.flush()
  } finally {
    await session.close()
  }
  // Its own foreground children died with it.
  const open = (await sessions.list()).filter((summary) => summary.parentSessionId === id && summary.status === 'needs-repair')
  for (const child of open) await closeLostChild(sessions, child.id)
}
