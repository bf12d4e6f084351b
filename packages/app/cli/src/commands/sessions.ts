/** `rein sessions`: stored sessions, newest first. */

import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { withComposition } from '../session-command.ts'

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
    for (const session of sessions) {
      const when = session.lastActivity.replace('T', ' ').slice(0, 16)
      io.stdout.write(`${session.id}  ${when}  ${String(session.turns).padStart(3)} turn${session.turns === 1 ? ' ' : 's'}  ${session.title ?? '(no message)'}\n`)
    }
    return 0
  })
}
