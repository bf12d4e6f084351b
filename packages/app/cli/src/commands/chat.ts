/**
 * `rein chat`: a loop on a terminal. Ctrl-C cancels a running turn (its calls get paired, the log
 * saved); Ctrl-C at the prompt, a second Ctrl-C, or end of input leaves.
 */

import { createInterface } from 'node:readline/promises'
import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { exitFor, installApproval, openAgent, withComposition } from '../session-command.ts'

export async function chatCommand(args: ParsedArgs, io: Io): Promise<number> {
  if (!io.stdin.isTTY) throw new ReinError('USAGE', 'rein chat needs a terminal; for scripts use rein run "…"')
  return withComposition(args.options, io, async (scope) => {
    const prompt = createInterface({ input: io.stdin, output: io.stderr, terminal: true })
    installApproval(scope.ctx, args.options.yes, async (request) => {
      const answer = await prompt.question(`allow ${request.toolName} (${request.reason})? [y/N] `, { signal: request.signal })
      return /^y(es)?$/i.test(answer.trim()) ? 'allow' : 'deny'
    })
    const { agent } = await openAgent(scope, args.options.session)
    scope.renderer.notice(`session ${agent.session.id} · Ctrl-C cancels a turn, Ctrl-D leaves`)
    const unsubscribe = agent.subscribe((event) => scope.renderer.event(event))
    let last = 0
    let closing = false
    // Closing the interface does not settle a pending question on Node 20: abort it ourselves.
    const questions = new AbortController()
    prompt.on('close', () => questions.abort())
    prompt.on('SIGINT', () => {
      if (agent.status === 'running' && !closing) {
        closing = true
        agent.cancel('SIGINT')
      } else {
        prompt.close()
      }
    })
    try {
      while (true) {
        closing = false
        let line: string
        try {
          line = await prompt.question('> ', { signal: questions.signal })
        } catch {
          break // input closed (Ctrl-D) or the prompt was closed
        }
        if (!line.trim()) continue
        const result = await agent.send(line)
        scope.renderer.result(result)
        last = exitFor(result)
        if (questions.signal.aborted) break
      }
      return last
    } finally {
      unsubscribe()
      prompt.close()
      await agent.close()
    }
  })
}
