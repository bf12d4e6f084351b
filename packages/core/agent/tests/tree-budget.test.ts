// Budgets cover the tree: a subagent's steps count against its parent's turn, and a subagent is
// made with at most what that turn has left.
import type { AdapterRequest } from '@rein/llm'
import type { ScriptedTurn } from '@rein/testkit'
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

/** A tool that starts a subagent on the calling run and sends it one task (`task`, else `child task`). */
function spawner(root: Awaited<ReturnType<typeof boot>>['root'], children: Agent[]) {
  return defineTool({
    name: 'spawn', description: 'Delegates.', parameters: { task: { type: 'string' } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    // Children that run at once, as read-only subagents do.
    isConcurrencySafe: true,
    execute: async (args, run: ToolRun) => {
      const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      children.push(child)
      try {
        return (await child.send(args.task ?? 'child task')).text
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

/** The first user message's text: which conversation a request belongs to. */
const taskOf = (request: AdapterRequest) => {
  const first = request.messages.find((message) => message.role === 'user')?.content[0]
  return first?.type === 'text' ? first.text : ''
}

/** Answers `turns[task][n]` to the request of conversation `task` that holds `n` answers already. */
const byTask = (turns: Record<string, readonly ScriptedTurn[]>) => (request: AdapterRequest) => turns[taskOf(request)]![request.messages.filter((message) => message.role === 'assistant').length]!

/** A tool whose calls all wait until `count` of them have started. */
function meeting(count: number) {
  let arrived = 0
  let all!: () => void
  const met = new Promise<void>((resolve) => { all = resolve })
  return defineTool({
    name: 'meet', description: 'Waits for the others.', parameters: {}, effects: ['read'],
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async () => {
      if (++arrived === count) all()
      await met
      return 'met'
    },
  })
}

describe('siblings running at once', () => {
  it('overshoots the parent\'s maxOutputTokens when each child caps its requests by its own budget, not by what the parent has left', async () => {
    const spawn = (task: string, id: string) => ({ toolCall: { id, name: 'spawn', arguments: JSON.stringify({ task }) } })
    const usage = (outputTokens: number) => ({ usage: { inputTokens: 1, outputTokens } })
    const { root, llm } = await boot(byTask({
      'go': [[spawn('A', 's1'), spawn('B', 's2'), usage(10)], [{ text: 'done' }, usage(1)]],
      // Each child's first answer is charged before either asks again (they meet in between).
      'A': [[call('meet', 'm1'), usage(50)], [{ text: 'a done' }, usage(5)]],
      // Cut at the request's limit: the parent's remainder, which the message names.
      'B': [[call('meet', 'm2'), usage(30)], { steps: [{ text: 'b cut' }, usage(10)], finish: 'max-tokens' }],
    }), { agent: { maxOutputTokens: 100 } })
    const children: Agent[] = []
    root.tools.register(spawner(root, children))
    root.tools.register(meeting(2))
    const parent = await root.agents.create()
    await parent.send('go')
    // Both children were made with the 90 tokens the parent had left then.
    expect(children.map((child) => child.options.maxOutputTokens)).toEqual([90, 90])
    // After their first answers the parent's turn had 100 − 10 − 50 − 30 = 10 left: each next
    // request asks for at most that, not for what its own budget has left (40 and 60).
    const second = llm.requests.filter((request) => taskOf(request) !== 'go' && request.messages.some((message) => message.role === 'assistant'))
    expect(second.map((request) => [taskOf(request), request.maxTokens])).toEqual(expect.arrayContaining([['A', 10], ['B', 10]]))
    expect(second).toHaveLength(2)
    const b = children.find((child) => taskOf({ messages: child.session.messages() } as AdapterRequest) === 'B')!
    expect(b.session.events.at(-1)!.data).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS', message: 'the answer was cut at the 10 output tokens its parent\'s turn had left for its subagents (maxOutputTokens)' } })
  })

  it('ends the parent\'s turn on its budget when its subagents spent what was left, instead of sending a request for 1 token', async () => {
    const usage = (outputTokens: number) => ({ usage: { inputTokens: 1, outputTokens } })
    const { root, llm } = await boot(byTask({
      'go': [[call('spawn', 's1'), usage(10)], [{ text: 'never asked' }, usage(1)]],
      'child task': [[{ text: 'spent it all' }, usage(95)]],
    }), { agent: { maxOutputTokens: 100 } })
    const children: Agent[] = []
    root.tools.register(spawner(root, children))
    const parent = await root.agents.create()
    const result = await parent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' } })
    expect(llm.requests.filter((request) => taskOf(request) === 'go')).toHaveLength(1)
  })
})
