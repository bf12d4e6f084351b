/** `rein sessions`: stored sessions, newest first, with where each stands and what it cost. */

import type { SessionSummary } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { formatCost } from '../render.ts'
import { withComposition } from '../session-command.ts'
import { neutralize } from '../terminal-text.ts'

const STATUS: Record<SessionSummary['status'], string> = {
  'completed': 'completed',
  'aborted': 'cancelled',
  'error': 'failed',
  'budget': 'over budget',
  'max-tokens': 'cut off',
  'interrupted': 'interrupted',
  'needs-repair': 'needs repair',
  'running': 'running',
  'empty': 'empty',
}

export async function sessionsCommand(args: ParsedArgs, io: Io): Promise<number> {
  return withComposition(args.options, io, async ({ ctx }) => {
    const sessions = [...await ctx.sessions.list()].sort((a, b) => (a.lastActivity < b.lastActivity ? 1 : -1))
    if (args.options.json) {
      for (const session of sessions) io.stdout.write(`${JSON.stringify(session)}\n`)
      return 0
    }
    if (sessions.length === 0) {
      io.stderr.write('no sessions yet; rein run "…" starts one\n')
      return 0
    }
    for (const session of sessions) io.stdout.write(`${neutralize(line(session))}\n`)
    return 0
  })
}

/** `3f2a9c1e-…  2026-12-01 10:04  completed     deepseek-chat      2 turns    12,301 tok    0.0042  Fix the parser…` */
function line(session: SessionSummary): string {
  const when = session.lastActivity.replace('T', ' ').slice(0, 16)
  const tokens = session.usage.inputTokens + (session.usage.cacheReadTokens ?? 0) + (session.usage.cacheWriteTokens ?? 0) + session.usage.outputTokens
  const cost = session.cost === undefined ? '-' : formatCost(session.cost)
  const indent = '  '.repeat(session.depth)
  return [
    `${indent}${session.id}`,
    when,
    STATUS[session.status].padEnd(12),
    (session.model ?? '-').padEnd(16),
    `${String(session.turns).padStart(3)} turn${session.turns === 1 ? ' ' : 's'}`,
    `${tokens.toLocaleString('en-US')} tok`.padStart(12),
    cost.padStart(8),
    session.title ?? '(no message)',
  ].join('  ')
}
