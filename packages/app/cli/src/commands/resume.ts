/** `rein resume <id> ["more"]`: repair an interrupted session and continue it, or add a message. */

import { ReinError } from '@rein/base'
import { eventData, type SessionEvent } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { installApproval } from '../approval.ts'
import { openAgent, requireModel, settleJobs, streamTurn, withComposition } from '../session-command.ts'

export async function resumeCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...rest] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein resume needs a session id; rein sessions lists them')
  const text = rest.join(' ').trim()
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    installApproval(scope.ctx, args.options, undefined, (text) => scope.renderer.notice(text))
    // The compaction notice waits: a session with nothing to continue runs nothing it would be about.
    const { agent, compactionNotice } = await openAgent(scope, id, { sayCompaction: false })
    try {
      // A notice opening the session handed over (a job lost with the killed process) is news to answer.
      if (!text && lastTurnCompleted(agent.session.events) && agent.injections === 0) {
        const full = agent.session.id
        throw new ReinError('USAGE', `session ${full} ended cleanly, so there is nothing to continue; add a message: rein resume ${full} "…"`)
      }
      if (compactionNotice !== undefined) scope.renderer.notice(compactionNotice)
      scope.renderer.notice(`session ${agent.session.id}`, { type: 'session', id: agent.session.id })
      return await streamTurn(io, scope.renderer, agent, (running) => (text ? running.send(text) : running.continue()), scope.interrupted)
    } finally {
      await settleJobs(scope, agent)
      await agent.close()
    }
  })
}

/**
 * A turn that completed leaves nothing to continue, unless something was injected since. Any other end — interrupted (by a crash and its
 * repair, or a cancel), failed, over budget, cut off — can be continued without a new message.
 */
function lastTurnCompleted(events: readonly SessionEvent[]): boolean {
  const end = events.findLast((event) => event.type === 'turn/end')
  return end !== undefined && eventData(end, 'turn/end').reason === 'completed'
}
