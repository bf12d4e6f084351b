/** `rein compact <id> ["what to keep"]`: compact a stored session's context now. */

import type { Agent } from '@rein/agent'
import { isReinError, ReinError } from '@rein/base'
import type { ContextCompacted } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { compactionLine } from '../render.ts'
import { EXIT } from '../exit-codes.ts'
import { openAgent, reportRepair, requireModel, resolveSessionId, withComposition } from '../session-command.ts'

export async function compactCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...rest] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein compact needs a session id; rein sessions lists them')
  const instructions = rest.join(' ').trim()
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    const sessionId = await resolveSessionId(scope.ctx, id)
    // Compacting does no agent work: a log a crash left mid-turn is closed as a lost subagent's is
    // (each open call settled by its tool or paired as unknown, none run again, no subagent
    // continued), where a resume would run and continue them.
    reportRepair(scope.renderer, sessionId, await scope.ctx.agents.repair(sessionId, { signal: scope.interrupted }))
    const { agent } = await openAgent(scope, sessionId)
    try {
      const data = await compactStopped(agent, instructions, scope.interrupted)
      if (data === 'interrupted') {
        scope.renderer.notice(`session ${sessionId}: the compaction was stopped before it finished; nothing was changed`)
        return EXIT.interrupted
      }
      if (!data) {
        scope.renderer.notice(`session ${sessionId}: nothing to compact (no tool result to prune, no earlier turns to summarize)`, { type: 'compacted', id: sessionId, changed: false })
        return 0
      }
      if (data.summaryFailed && data.pruned.length === 0) {
        // Nothing changed: say why the summary failed (the provider's words say what to fix), not "compacted".
        const { code, message } = data.summaryFailed
        scope.renderer.notice(`session ${sessionId}: not compacted: the summary failed (${code}: ${message}); the session is as it was`, { type: 'compacted', id: sessionId, ...data })
        return 1
      }
      scope.renderer.notice(`session ${sessionId}: ${compactionLine(data)}`, { type: 'compacted', id: sessionId, ...data })
      return 0
    } finally {
      await agent.close()
    }
  })
}

/** The compaction, or `interrupted` when Ctrl-C (or SIGTERM) stopped it: exit 130, as for a turn. */
async function compactStopped(agent: Agent, instructions: string, interrupted: AbortSignal): Promise<ContextCompacted | undefined | 'interrupted'> {
  try {
    return await agent.compactNow(instructions || undefined, interrupted)
  } catch (error) {
    if (interrupted.aborted && isReinError(error, 'ABORTED')) return 'interrupted'
    throw error
  }
}
