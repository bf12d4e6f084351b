// Budgets cover the tree: a subagent's steps count against its parent's turn, and a subagent is
// made with at most what that turn has left.
import { defineTool, type ToolRun } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { Agent } from '../src/index.ts'
import { boot } from './fixtures.ts'

const call = (name: string, id = `c-${name}`) => ({ toolCall: { id, name, arguments: '{}' } })
const look = defineTool({
  name: 'look', description: 'Looks.', parameters: {}, effects: ['read'],
  output: { schema: { type: 'string' }, render: (_args, value) => value },
  execute: () => 'seen',
})

/** A tool that starts a subagent on the calling run and sends it one task. */
function spawner(root: Awaited<ReturnType<typeof boot>>['root'], children: Agent[]) {
  return defineTool({
    name: 'spawn', description: 'Delegates.', parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async (_args, run: ToolRun) => {
      const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      children.push(child)
      try {
        return (await child.send('child task')).text
      } finally {
        await child.close()
      }
    },
  })
}

describe('budgets over a tree of agents', () => {
  it('makes a subagent with at most the steps its parent\'s turn has left, and counts its steps against that turn', async () => {
    const { root } = await boot([
      [call('spawn', 's1')],
      [call('look', 'k1')], [{ text: 'child done' }],
      [call('look', 'k2')],
      [{ text: 'never asked' }],
    ], { agent: { maxSteps: 4 } })
    const children: Agent[] = []
    root.tools.register(spawner(root, children))
    root.tools.register(look)
    const parent = await root.agents.create()
    const result = await parent.send('go')
    // At its first step the parent had 3 steps left; the child took 2, the parent's second step made 4.
    expect(children[0]!.options.maxSteps).toBe(3)
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_STEPS', message: 'the turn reached its limit of 4 requests (2 of them made by its subagents)' } })
  })

  it('refuses a subagent when the parent\'s turn has no steps left (BUDGET_EXHAUSTED), as the call\'s error', async () => {
    const { root } = await boot([[call('spawn', 's1')], [{ text: 'after' }]], { agent: { maxSteps: 1 } })
    const children: Agent[] = []
    root.tools.register(spawner(root, children))
    const parent = await root.agents.create()
    await parent.send('go')
    const result = parent.session.events.find((event) => event.type === 'tool/result')!.data as { code?: string }
    expect(result.code).toBe('BUDGET_EXHAUSTED')
    expect(children).toEqual([])
  })

  it('leaves a subagent made outside a running turn to its own budgets', async () => {
    const { root } = await boot([[{ text: 'idle' }], [{ text: 'child' }]], { agent: { maxSteps: 7 } })
    const parent = await root.agents.create()
    await parent.send('go')
    const start = parent.session.events.find((event) => event.type === 'turn/start')!.data as { runId: string }
    const child = await root.agents.create({ parent: { sessionId: parent.session.id, runId: start.runId, callId: 'c0' } })
    expect(child.options.maxSteps).toBe(7)
    expect(parent.budgetLeft()).toBeUndefined()
  })
})
