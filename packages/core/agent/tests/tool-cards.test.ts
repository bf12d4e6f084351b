// Tool cards are for listeners: a tool's presenters run only when someone listens to the agent.
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../src/index.ts'
import { boot } from './fixtures.ts'

/** A tool whose presenters count their calls. */
async function bootWithPresentedTool() {
  const { root } = await boot([
    [{ toolCall: { id: 'c1', name: 'look', arguments: '{"key":"a"}' } }, { toolCall: { id: 'c2', name: 'look', arguments: '{"key":"b"}' } }],
    [{ text: 'Done.' }],
  ])
  const presented = { calls: 0, results: 0 }
  root.tools.register(defineTool({
    name: 'look',
    description: 'Looks a key up.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: (args) => `value of ${args.key}`,
    presentCall(args) {
      presented.calls++
      return { card: 'generic', title: `look ${args.key}` }
    },
    presentResult(args, result) {
      presented.results++
      return { card: 'generic', title: `looked ${args.key}`, text: result.isError ? 'failed' : 'found' }
    },
  }))
  return { root, presented }
}

describe('tool cards', () => {
  it('are not built when nothing listens to the agent: the presenters are not run', async () => {
    const { root, presented } = await bootWithPresentedTool()
    const agent = await root.agents.create()
    expect((await agent.send('look both up')).reason).toBe('completed')
    expect(presented).toEqual({ calls: 0, results: 0 })
  })

  it('are built for each call while something listens', async () => {
    const { root, presented } = await bootWithPresentedTool()
    const agent = await root.agents.create()
    const cards: AgentEvent[] = []
    agent.subscribe((event) => {
      if (event.type === 'tool-start' || event.type === 'tool-end') cards.push(event)
    })
    expect((await agent.send('look both up')).reason).toBe('completed')
    expect(presented).toEqual({ calls: 2, results: 2 })
    expect(cards.map((event) => (event.type === 'tool-start' || event.type === 'tool-end' ? `${event.type} ${event.card.title}` : ''))).toEqual([
      'tool-start look a', 'tool-start look b', 'tool-end looked a', 'tool-end looked b',
    ])
  })
})
