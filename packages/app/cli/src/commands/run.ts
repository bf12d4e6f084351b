/** `rein run "task"`: one turn, streamed; exit code by how it ended. */

import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { installApproval } from '../approval.ts'
import { openAgent, requireModel, settleJobs, streamTurn, withComposition } from '../session-command.ts'

export async function runCommand(args: ParsedArgs, io: Io): Promise<number> {
  const fromStdin = args.positionals[0] === '-'
  if (fromStdin && args.positionals.length > 1) throw new ReinError('USAGE', 'rein run - reads the whole task from stdin: give no other words with it')
  // On a terminal the read waits for Ctrl-D: say so, or it looks stuck.
  if (fromStdin && io.stdin.isTTY) io.stderr.write('reading the task from stdin; end it with Ctrl-D\n')
  const task = fromStdin ? (await readAll(io.stdin)).trim() : args.positionals.join(' ').trim()
  if (!task) throw new ReinError('USAGE', fromStdin ? 'rein run - read no task from stdin' : 'rein run needs a task, e.g. rein run "summarise README.md"')
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

/** Everything `stream` gives until it ends, as text: `rein run -` takes its task from a pipe or a file. */
async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = []
  // Joined before decoding: a character split between two chunks stays whole.
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk))
  return Buffer.concat(chunks).toString('utf8')
}
