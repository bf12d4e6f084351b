/** `rein compact <id> ["what to keep"]`: compact a stored session's context now. */

import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { compactionLine } from '../render.ts'
import { openAgent, requireModel, withComposition } from '../session-command.ts'

export async function compactCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...rest] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein compact needs a session id; rein sessions lists them')
  const instructions = rest.join(' ').trim()
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    const { agent } = await openAgent(scope, id)
    try {
      const data = await agent.compactNow(instructions || undefined, scope.interrupted)
      if (!data) {
        scope.renderer.notice(`session ${id}: nothing to compact (no tool result to prune, no earlier turns to summarize)`, { type: 'compacted', id, changed: false })
        return 0
      }
      if (data.summaryFailed && data.pruned.length === 0) {
        // Nothing changed: say why the summary failed (the provider's words say what to fix), not "compacted".
        const { code, message } = data.summaryFailed
        scope.renderer.notice(`session ${id}: not compacted: the summary request failed (${code}: ${message}); the session is as it was`, { type: 'compacted', id, ...data })
        return 1
      }
      scope.renderer.notice(`session ${id}: ${compactionLine(data)}`, { type: 'compacted', id, ...data })
      return 0
    } finally {
      await agent.close()
    }
  })
}
