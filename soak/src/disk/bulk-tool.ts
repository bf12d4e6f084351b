// Tools for the disk suite, loaded by path from the project's cordis.yml: `bulk` returns as many
// characters as asked, so each step of a run adds a known amount to the session log; `wait_for`
// holds its process (and the session's lock) until the test makes a file, so a second process
// meets the lock at a moment the test chose.
import { existsSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import { defineTool } from '@rein/tools'

export const name = 'soak-disk-tools'
export const inject = ['tools']

export const apply = (ctx: Context) => {
  ctx.tools.register(defineTool({
    name: 'bulk',
    description: 'Returns `size` characters.',
    parameters: { size: { type: 'integer', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    execute: (args) => 'b'.repeat(args.size),
    isConcurrencySafe: true,
  }))
  ctx.tools.register(defineTool({
    name: 'wait_for',
    description: 'Waits until `file` exists.',
    parameters: { file: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: (args, run) => new Promise<string>((resolve) => {
      const poll = setInterval(() => {
        if (!existsSync(args.file) && !run.signal.aborted) return
        clearInterval(poll)
        resolve('released')
      }, 20)
    }),
  }))
}
