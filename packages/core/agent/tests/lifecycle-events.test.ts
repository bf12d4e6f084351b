// Context-wide lifecycle events: telemetry and budgets across a tree are built from these alone.
import type { Context } from '@deepseek-ai/cordis'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { LifecycleEvents } from '../src/index.ts'
import { boot, expectValidLog } from './fixtures.ts'

const NAMES: (keyof LifecycleEvents)[] = [
  'agent/turn-start', 'agent/turn-end', 'agent/step-start', 'agent/step-end',
  'agent/llm-start', 'agent/llm-end', 'agent/tool-start', 'agent/tool-end',
]

function listen(root: Context) {
  const heard: { name: keyof LifecycleEvents; event: LifecycleEvents[keyof LifecycleEvents] }[] = []
  for (const name of NAMES) root.on(name, (event: never) => { heard.push({ name, event }) })
  return heard
}

function toolsFor(root: Context) {
  root.tools.register(defineTool({
    name: 'edit',
    description: 'Edits.',
    parameters: {},
    effects: ['write'],
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: () => 'edited',
  }))
}

describe('lifecycle events', () => {
  it('tells listeners every phase of a turn, in order, with the run identity', async () => {
    const { root } = await boot([
      [{ toolCall: { id: 'c1', name: 'edit', arguments: '{}' } }, { usage: { inputTokens: 10, outputTokens: 2 } }],
      [{ text: 'done' }, { usage: { inputTokens: 20, outputTokens: 1 } }],
    ], { agent: { temperature: 0.5 } })
    toolsFor(root)
    root.provide('approval', { request: () => 'allow' as const })
    const heard = listen(root)
    const agent = await root.agents.create()
    await agent.send('go')
    expect(heard.map((entry) => entry.name)).toEqual([
      'agent/turn-start',
      'agent/step-start', 'agent/llm-start', 'agent/llm-end', 'agent/tool-start', 'agent/tool-end', 'agent/step-end',
      'agent/step-start', 'agent/llm-start', 'agent/llm-end', 'agent/step-end',
      'agent/turn-end',
    ])
    const runId = (agent.session.events[0]!.data as { runId: string }).runId
    for (const { event } of heard) expect(event.identity).toMatchObject({ runId, sessionId: agent.session.id, depth: 0, agent: 'main' })
    const byName = <K extends keyof LifecycleEvents>(name: K) => heard.filter((entry) => entry.name === name).map((entry) => entry.event as LifecycleEvents[K])
    expect(byName('agent/llm-start')[0]).toMatchObject({ step: 1, route: 'scripted', providerName: 'scripted', requestModel: 'm', temperature: 0.5, retry: 0, fallback: 0 })
    expect(byName('agent/llm-end')[0]).toMatchObject({ step: 1, finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2 } })
    expect(byName('agent/tool-end')[0]).toMatchObject({ step: 1, name: 'edit', callId: 'c1', effects: ['write'], isError: false })
    expect(byName('agent/turn-end')[0]).toMatchObject({ turn: 1, reason: 'completed', usage: { inputTokens: 30, outputTokens: 3 } })
  })

  it('reports a failed attempt with its error code, and a denied tool with its code', async () => {
    const { root } = await boot([
      [{ fail: { code: 'AUTH', message: 'bad key' } }],
    ])
    const heard = listen(root)
    const agent = await root.agents.create()
    await agent.send('go')
    expect(heard.find((entry) => entry.name === 'agent/llm-end')?.event).toMatchObject({ errorCode: 'AUTH' })
    expect(heard.find((entry) => entry.name === 'agent/turn-end')?.event).toMatchObject({ reason: 'error', errorCode: 'AUTH' })
  })

  it('keeps the run going when listeners throw or reject', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'edit', arguments: '{}' } }], [{ text: 'done' }]])
    toolsFor(root)
    root.provide('approval', { request: () => 'allow' as const })
    for (const name of NAMES) {
      root.on(name, () => { throw new Error(`${name} listener broke`) })
      root.on(name, (() => Promise.reject(new Error(`${name} listener rejected`))) as () => void)
    }
    const heard = listen(root)
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'done' })
    expect(heard).toHaveLength(12)
    expectValidLog(agent.session.events)
  })

  it('dispatches nothing while nobody listens', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'edit', arguments: '{}' } }], [{ text: 'done' }], [{ text: 'heard' }]])
    toolsFor(root)
    root.provide('approval', { request: () => 'allow' as const })
    const dispatched: string[] = []
    const dispatch = root.events.dispatch.bind(root.events)
    root.events.dispatch = (type: string, args: unknown[]) => {
      const name = args.find((arg) => typeof arg === 'string')
      if (typeof name === 'string') dispatched.push(name)
      return dispatch(type, args)
    }
    const agent = await root.agents.create()
    await agent.send('go')
    expect(dispatched.filter((name) => name.startsWith('agent/') || name.startsWith('llm/'))).toEqual([])
    // The check sees the listener list: with a listener, the same turn reaches it.
    const heard: number[] = []
    root.on('agent/turn-start', (event) => { heard.push(event.turn) })
    await agent.send('again')
    expect(heard).toEqual([2])
  })

  it('goes through the dispatch when something observes every dispatch (internal/dispatch)', async () => {
    const { root } = await boot([[{ text: 'done' }]])
    const observed: string[] = []
    root.on('internal/dispatch', (_type, name) => { observed.push(name) })
    const heard: number[] = []
    root.on('agent/turn-start', (event) => { heard.push(event.turn) })
    const agent = await root.agents.create()
    await agent.send('go')
    expect(heard).toEqual([1])
    expect(observed).toContain('agent/turn-start')
  })
})
