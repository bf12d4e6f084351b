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
    expect(plan.cutOff).toEqual([
      { callId: 'm1-c0', by: 'sh: echo s >> log.txt; sleep 20', code: 'COMMAND_INTERRUPTED' },
      { callId: 'm1-c1', by: 'sh: make', code: 'TOOL_OUTCOME_UNKNOWN' },
    ])
    expect(plan.notCovered).toEqual([
      '`sh: echo s >> log.txt; sleep 20` was cut off when rein was stopped (COMMAND_INTERRUPTED): what it changed was not recorded and is not undone; check by hand',
      // Its processes were gone: it may have finished, and its walk recorded what it changed.
      '`sh: make` had no result when rein was stopped (TOOL_OUTCOME_UNKNOWN): what it changed may not have been recorded, and is not undone; check by hand',
    ])
  })

  it('names one in a log not repaired yet (as a dry run reads it), whose call has no result at all', async () => {
    const ctx = await setup()
    const session = await ctx.sessions.create({ id: 's1', cwd: '/w' })
    session.append('turn/start', { turn: 1, anchor: 'm1' })
    session.append('user/message', { message: userMessage('go', 'm1') })
    session.append('tool/call', { callId: 'c1', name: 'sh', arguments: JSON.stringify({ command: 'make' }), replaySafe: false })
    await session.flush()
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.cutOff).toEqual([{ callId: 'c1', by: 'sh: make' }])
    expect(plan.notCovered[0]).toBe('`sh: make` was cut off when rein was stopped (it has no result, the session not being repaired yet): what it changed was not recorded and is not undone; check by hand')
  })

  it('leaves out one whose walk after it left records: what it changed is undone with them', async () => {
    const ctx = await setup()
    await turnCutOff(ctx, 'm1', 1, [{ name: 'sh', args: { command: 'make' }, code: 'TOOL_OUTCOME_UNKNOWN' }])
    await ctx.checkpoints.record('s1', { anchor: 'm1', root: '/w', path: 'out.txt', existed: false, before: null, after: Buffer.from('x'), by: 'sh: make' })
    expect((await ctx.checkpoints.plan('s1', 'm1')).cutOff).toEqual([])
  })

  it('only for the turns rewound: one cut off in an earlier turn is not this rewind\'s', async () => {
    const ctx = await setup()
    await turnCutOff(ctx, 'm1', 1, [{ name: 'sh', args: { command: 'first' }, code: 'COMMAND_INTERRUPTED' }])
    await turnCutOff(ctx, 'm2', 2, [{ name: 'sh', args: { command: 'second' }, code: 'COMMAND_INTERRUPTED' }])
    expect((await ctx.checkpoints.plan('s1', 'm2')).cutOff.map((command) => command.by)).toEqual(['sh: second'])
    expect((await ctx.checkpoints.plan('s1', ['m1', 'm2'])).cutOff.map((command) => command.by)).toEqual(['sh: first', 'sh: second'])
  })
})

describe('a rewind over a background command a kill cut off', () => {
  it('names one whose job the log gives no end, or an end as lost, and not one that ended', async () => {
    const ctx = await setup()
    for (const type of ['jobs/start', 'jobs/end']) ctx.sessions.defineEvent(type, { ignorable: true })
    const session = await ctx.sessions.create({ id: 's1', cwd: '/w' })
    session.append('turn/start', { turn: 1, anchor: 'm1' })
    session.append('user/message', { message: userMessage('go', 'm1') })
    // The job starts inside the call's body: between its intent and its result.
    const background = (callId: string, command: string, jobId: string) => {
      session.append('tool/call', { callId, name: 'sh', arguments: JSON.stringify({ command, run_in_background: true }), replaySafe: false })
      session.append('jobs/start', { jobId, kind: 'bash', label: command })
      session.append('tool/result', { callId, content: [{ type: 'text', text: `Started ${jobId}` }], isError: false })
    }
    background('c1', 'sleep 9; echo a > a', 'bash-1')
    background('c2', 'make', 'bash-2')
    background('c3', 'ls', 'bash-3')
    session.append('jobs/end', { jobId: 'bash-2', status: 'killed', cause: 'lost', notice: true })
    session.append('jobs/end', { jobId: 'bash-3', status: 'done', exitCode: 0, notice: true })
    await session.close()
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.cutOff).toEqual([
      { callId: 'c2', by: 'sh: make', job: 'bash-2', code: 'JOB_LOST' },
      { callId: 'c1', by: 'sh: sleep 9; echo a > a', job: 'bash-1' },
    ])
    expect(plan.notCovered).toEqual([
      '`sh: make` ran as background job bash-2, which was lost when rein was stopped: what it changed was not recorded and is not undone; check by hand',
      '`sh: sleep 9; echo a > a` ran as background job bash-1, which has no end in the log (rein was stopped while it ran): what it changed was not recorded and is not undone, and it may still be running; check by hand',
    ])
  })
})
