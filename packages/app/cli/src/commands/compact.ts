/** `rein compact <id> ["what to keep"]`: compact a stored session's context now. */

import type { Agent } from '@rein/agent'
import { isReinError, ReinError } from '@rein/base'
import { spending, type ContextCompacted } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { compactOutcome, spentLine } from '../render.ts'
import { EXIT } from '../exit-codes.ts'
import { closeCrashedLog, openAgent, requireModel, resolveSessionId, windowErrorInTerms, withComposition } from '../session-command.ts'

export async function compactCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...rest] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein compact needs a session id; rein sessions lists them')
  const instructions = rest.join(' ').trim()
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    // No turn runs: a signal stops the compaction, of which nothing is written unless it completes.
    scope.announceSignal(() => 'stopping the compaction (nothing of it is written until it completes)')
    const sessionId = await resolveSessionId(scope.ctx, id)
    // Compacting does no agent work: a log a crash left mid-turn is closed, not resumed.
    const repaired = await closeCrashedLog(scope, sessionId)
    // No compaction notice: a model with no known window fails the compaction, whose error gives the same advice.
    const { agent } = await openAgent(scope, sessionId, { sayCompaction: false })
    // The summary request's retries are said as a turn's are: a compaction that waits is seen waiting.
    const unsubscribe = agent.subscribe((event) => scope.renderer.event(event))
    try {
      const before = agent.session.events.length
      const data = await compactStopped(agent, instructions, scope.interrupted).catch((error: unknown) => { throw windowErrorInTerms(scope, agent, error) })
      if (data === 'interrupted') {
        scope.renderer.notice(`session ${sessionId}: the compaction was stopped before it finished and changed nothing${repaired ? ' more than the repair above' : ''}`)
        return EXIT.interrupted
      }
      const { line, changed } = compactOutcome(data, repaired)
      // What the summary request cost is said as a turn's spending is: the one command whose whole job is a paid request.
      const spent = spending(agent.session.events.slice(before))
      const paid = spent.usage.inputTokens + spent.usage.outputTokens > 0
      scope.renderer.notice(`session ${sessionId}: ${line}`, { type: 'compacted', id: sessionId, changed, ...data, ...(paid ? spent : {}) })
      if (paid && !args.options.json) scope.renderer.notice(`the summary request: ${spentLine(spent, scope.source === 'built-in')}`)
      // Asked for and not done: a failure, unless there was nothing to do.
      if (data && !changed) return EXIT.error
      return 0
    } finally {
      unsubscribe()
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
