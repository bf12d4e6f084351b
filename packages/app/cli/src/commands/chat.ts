/**
 * `rein chat`: a loop on a terminal. Lines typed while a turn runs are queued and sent in order.
 * Ctrl-C cancels a running turn (its calls get paired, the log saved); Ctrl-C at the prompt, a
 * second Ctrl-C, or end of input (after the queue is sent) leaves.
 */

import { createInterface, type Interface } from 'node:readline/promises'
import { ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { Io } from '../io.ts'
import { exitFor, installApproval, openAgent, withComposition } from '../session-command.ts'
import { neutralize } from '../terminal-text.ts'

export async function chatCommand(args: ParsedArgs, io: Io): Promise<number> {
  if (!io.stdin.isTTY) throw new ReinError('USAGE', 'rein chat needs a terminal; for scripts use rein run "…"')
  return withComposition(args.options, io, async (scope) => {
    const prompt = createInterface({ input: io.stdin, output: io.stderr, terminal: true })
    prompt.setPrompt('> ')
    // A pending approval question takes the next line before the queue sees it (readline's rule).
    installApproval(scope.ctx, args.options.yes, async (request) => {
      const answer = await prompt.question(neutralize(`allow ${request.toolName} (${request.reason})? [y/N] `), { signal: request.signal })
      return /^y(es)?$/i.test(answer.trim()) ? 'allow' : 'deny'
    })
    const { agent } = await openAgent(scope, args.options.session)
    scope.renderer.notice(`session ${agent.session.id} · Ctrl-C cancels a turn, Ctrl-D leaves`)
    const unsubscribe = agent.subscribe((event) => scope.renderer.event(event))
    const lines = lineQueue(prompt)
    let cancelling = false
    prompt.on('SIGINT', () => {
      if (agent.status === 'running' && !cancelling) {
        cancelling = true
        agent.cancel('SIGINT')
      } else {
        lines.stop()
        prompt.close()
      }
    })
    let last = 0
    try {
      for (let line = await lines.next(); line !== undefined; line = await lines.next()) {
        cancelling = false
        if (!line.trim()) continue
        const result = await agent.send(line)
        scope.renderer.result(result)
        last = exitFor(result)
      }
      return last
    } finally {
      unsubscribe()
      prompt.close()
      await agent.close()
    }
  })
}

/**
 * Every line the terminal gives, in order, whether or not anyone waits for it. `next()` shows the
 * prompt when the queue is empty; it resolves undefined once input ended and the queue is drained,
 * or at once after `stop()`.
 */
function lineQueue(prompt: Interface) {
  const queued: string[] = []
  let waiting: ((line: string | undefined) => void) | undefined
  let ended = false
  let stopped = false
  const settle = (line: string | undefined) => {
    const resolve = waiting
    waiting = undefined
    resolve?.(line)
  }
  prompt.on('line', (line) => {
    if (waiting) settle(line)
    else queued.push(line)
  })
  prompt.on('close', () => {
    ended = true
    settle(undefined)
  })
  return {
    next(): Promise<string | undefined> {
      if (stopped) return Promise.resolve(undefined)
      const line = queued.shift()
      if (line !== undefined || ended) return Promise.resolve(line)
      prompt.prompt()
      return new Promise((resolve) => { waiting = resolve })
    },
    stop() {
      stopped = true
      settle(undefined)
    },
  }
}
