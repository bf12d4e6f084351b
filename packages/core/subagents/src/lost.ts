/**
 * A background child whose process died (jobs reaped its job as `lost`): its log, and those of the
 * children it had, are closed as interrupted — every open call paired, the turn ended — so each
 * records a terminal state. Each open call's tool is asked `recover` first, as a resume's repair
 * asks it: a command the child was running is stopped by its tool (jobs' notice tells the model its
 * processes were stopped, and only this makes that true); what the child's own background jobs
 * left running is stopped by jobs. Nothing runs again and no child is continued here: `resume`
 * continues it later.
 */

import type { AgentService, ResumeReport } from '@rein/agent'
import type { JobService } from '@rein/jobs'
import type { SessionService } from '@rein/session'
import { SUBAGENT_TOOL } from './tool.ts'

export async function closeLostChild(agents: AgentService, sessions: SessionService, jobs: JobService | undefined, id: string): Promise<ResumeReport> {
  const report = await agents.repair(id)
  const { paired } = report
  if (jobs) await reapJobsOf(sessions, jobs, id)
  // Its foreground children died with it, each behind an open `subagent` call (paired unknown, not
  // recovered: that would continue the child). None open: nothing to look for (the store may be
  // going already, as rein exits).
  if (!paired.some((call) => call.name === SUBAGENT_TOOL)) return report
  const open = (await sessions.list({ all: true })).filter((summary) => summary.parentSessionId === id && summary.status === 'needs-repair')
  // Each child closed even when one cannot be (its log needs a plugin not loaded): the first
  // failure is thrown once all were tried, so it is still said, and the siblings are not left open.
  let failed: { error: unknown } | undefined
  for (const child of open) {
    try {
      await closeLostChild(agents, sessions, jobs, child.id)
    } catch (error) {
      failed ??= { error }
    }
  }
  if (failed) throw failed.error
  return report
}

/**
 * The child's own background jobs died with its process too, and what they ran may still be
 * running (a command started in the background): jobs stops it, as it does a resumed session's.
 */
async function reapJobsOf(sessions: SessionService, jobs: JobService, id: string): Promise<void> {
  const session = await sessions.open(id)
  try {
    await jobs.reapClosed(session)
  } finally {
    await session.close()
  }
}
