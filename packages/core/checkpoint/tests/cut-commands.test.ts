// A command a kill cut off: its walk after it never ran, so what it changed was never recorded. A
// rewind of its turn says so, naming it, rather than finding nothing to undo or reading as complete.
import { Context } from '@deepseek-ai/cordis'
import { userMessage } from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import ToolService, { defineTool } from '@rein/tools'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CheckpointService, MemoryCheckpointStore } from '../src/index.ts'
import { tempRoot } from './harness.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

const sh = defineTool({
  name: 'sh', description: 'Runs a shell command.', parameters: { command: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['exec'], execute: () => 'ran',
})
const lookup = defineTool({
  name: 'lookup', description: 'Looks a word up.', parameters: { word: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: [], execute: () => 'found',
})

async function setup() {
  vi.stubEnv('REIN_HOME', await tempRoot())
  const ctx = new Context()
  await ctx.plugin(ToolService, { askFor: [] })
  await ctx.plugin(SessionService)
  ctx.sessions.registerStore(new MemorySessionStore())
  await ctx.plugin(CheckpointService, {})
  ctx.checkpoints.registerStore(new MemoryCheckpointStore())
  ctx.tools.register(sh)
  ctx.tools.register(lookup)
  return ctx
}

/** A turn whose calls repair paired with `code` each (a kill cut them off), as its log keeps it. */
async function turnCutOff(ctx: Context, anchor: string, turn: number, calls: { name: string; args: object; code: string }[]) {
  const session = await ctx.sessions.open('s1').catch(() => ctx.sessions.create({ id: 's1', cwd: '/w' }))
  session.append('turn/start', { turn, anchor })
  session.append('user/message', { message: userMessage('go', anchor) })
  calls.forEach(({ name, args, code }, index) => {
    const callId = `${anchor}-c${index}`
    session.append('tool/call', { callId, name, arguments: JSON.stringify(args), replaySafe: false })
    session.append('tool/result', { callId, content: [{ type: 'text', text: 'cut off' }], isError: true, code })
  })
  await session.close()
}

describe('a rewind over a command a kill cut off', () => {
  it('names it as not covered: what it changed was never recorded, and is not undone', async () => {
    const ctx = await setup()
    await turnCutOff(ctx, 'm1', 1, [
      { name: 'sh', args: { command: 'echo s >> log.txt;\n  sleep 20' }, code: 'COMMAND_INTERRUPTED' },
      { name: 'sh', args: { command: 'make' }, code: 'TOOL_OUTCOME_UNKNOWN' },
      // Not a command: what a lookup did is nothing a rewind would undo.
      { name: 'lookup', args: { word: 'x' }, code: 'TOOL_OUTCOME_UNKNOWN' },
      // Never started: it changed nothing.
      { name: 'sh', args: { command: 'rm -rf build' }, code: 'TOOL_NOT_STARTED' },
    ])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items).toEqual([])
    expect(plan.notCovered).toEqual([
      '`sh: echo s >> log.txt; sleep 20` was cut off when rein was stopped (COMMAND_INTERRUPTED): what it changed was not recorded and is not undone; check by hand',
      '`sh: make` was cut off when rein was stopped (TOOL_OUTCOME_UNKNOWN): what it changed was not recorded and is not undone; check by hand',
    ])
  })

  it('only for the turns rewound: one cut off in an earlier turn is not this rewind\'s', async () => {
    const ctx = await setup()
    await turnCutOff(ctx, 'm1', 1, [{ name: 'sh', args: { command: 'first' }, code: 'COMMAND_INTERRUPTED' }])
    await turnCutOff(ctx, 'm2', 2, [{ name: 'sh', args: { command: 'second' }, code: 'COMMAND_INTERRUPTED' }])
    expect((await ctx.checkpoints.plan('s1', 'm2')).notCovered).toEqual([expect.stringContaining('`sh: second`')])
    expect((await ctx.checkpoints.plan('s1', ['m1', 'm2'])).notCovered).toEqual([expect.stringContaining('`sh: first`'), expect.stringContaining('`sh: second`')])
  })
})
