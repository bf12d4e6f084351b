/** `rein run "task"`: one turn, streamed; exit code by how it ended. */

import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { installApproval } from '../approval.ts'
import { openAgent, requireModel, settleJobs, streamTurn, withComposition } from '../session-command.ts'

export async function runCommand(args: ParsedArgs, io: Io): Promise<number> {
  const task = args.positionals.join(' ').trim()
  if (!task) throw new ReinError('USAGE', 'rein run needs a task, e.g. rein run "summarise README.md"')
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    installApproval(scope.ctx, args.options, undefined, (text) => scope.renderer.notice(text))
    const { agent } = await openAgent(scope, args.options.session)
    scope.renderer.notice(`session ${agent.session.id}`, { type: 'session', id: agent.session.id })
    try {
      return await streamTurn(io, scope.renderer, agent, (running) => running.send(task), scope.interrupted)
    } finally {
      await settleJobs(scope, agent)
      await agent.close()
    }
  })
}
