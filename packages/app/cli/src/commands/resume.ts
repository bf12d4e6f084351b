/** `rein resume <id> ["more"]`: repair an interrupted session and continue it. */

import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { cancelOnSignal, exitFor, installApproval, openAgent, withComposition } from '../session-command.ts'

export async function resumeCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...rest] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein resume needs a session id; rein sessions lists them')
  const text = rest.join(' ').trim()
  return withComposition(args.options, io, async (scope) => {
    installApproval(scope.ctx, args.options.yes)
    const { agent, repaired } = await openAgent(scope, id)
    try {
      if (!text && repaired?.closedTurn === undefined) {
        throw new ReinError('USAGE', `session ${id} ended cleanly, so there is nothing to continue; add a message: rein resume ${id} "…"`)
      }
      scope.renderer.notice(`session ${agent.session.id}`, { type: 'session', id: agent.session.id })
      const unsubscribe = agent.subscribe((event) => scope.renderer.event(event))
      const release = cancelOnSignal(io, agent, scope.renderer)
      try {
        const result = text ? await agent.send(text) : await agent.continue()
        scope.renderer.result(result)
        return exitFor(result)
      } finally {
        release()
        unsubscribe()
      }
    } finally {
      await agent.close()
    }
  })
}
