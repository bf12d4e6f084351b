// Tool cards are for listeners: a tool's presenters run only when a listener reads a card.
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { boot } from './fixtures.ts'

/** A tool whose presenters count their calls (its key `wait` waits for the turn to be cancelled), and `plain`, with none. */
async function bootWithPresentedTool(keys: readonly string[] = ['a', 'b']) {
  const { root } = await boot([
    [...keys.map((key, index) => ({ toolCall: { id: `c${index + 1}`, name: 'look', arguments: JSON.stringify({ key }) } })), { toolCall: { id: 'c9', name: 'plain', arguments: '{"key":"z"}' } }],
    [{ text: 'Done.' }],
  ])
  const presented = { calls: 0, results: 0 }
  let started = () => {}
  const waiting = new Promise<void>((resolve) => { started = resolve })
  root.tools.register(defineTool({
    name: 'plain',
    description: 'Has no presenter.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: (args) => `plain ${args.key}`,
  }))
  root.tools.register(defineTool({
    name: 'look',
    description: 'Looks a key up.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: async (args, run) => {
      if (args.key !== 'wait') return `value of ${args.key}`
      started()
      return await new Promise<string>((_resolve, reject) => run.signal.addEventListener('abort', () => reject(new Error('cancelled'))))
    },
    presentCall(args) {
      presented.calls++
      return { card: 'generic', title: `look ${args.key}` }
    },
    presentResult(args, result) {
      presented.results++
      return { card: 'generic', title: `looked ${args.key}`, text: result.isError ? 'failed' : 'found' }
    },
  }))
  return { root, presented, waiting }
}

describe('tool cards', () => {
  it('are not built when nothing listens to the agent: the presenters are not run', async () => {
    const { root, presented } = await bootWithPresentedTool()
    const agent = await root.agents.create()
    expect((await agent.send('look both up')).reason).toBe('completed')
    expect(presented).toEqual({ calls: 0, results: 0 })
  })

  it('are built for each call while something listens, when the listener reads them, once each', async () => {
    const { root, presented } = await bootWithPresentedTool()
    const agent = await root.agents.create()
    const cards: string[] = []
    let sameOnRereading = true
    agent.subscribe((event) => {
      // As a UI does: the card is read when the event comes, maybe more than once.
      if (event.type !== 'tool-start' && event.type !== 'tool-end') return
      cards.push(`${event.type} ${event.card.card} ${event.card.title}`)
      sameOnRereading &&= event.card === event.card
    })
    expect((await agent.send('look both up')).reason).toBe('completed')
    expect(presented).toEqual({ calls: 2, results: 2 })
    expect(sameOnRereading).toBe(true)
    expect(cards).toEqual([
      'tool-start generic look a', 'tool-start generic look b', 'tool-start generic plain',
      'tool-end generic looked a', 'tool-end generic looked b', 'tool-end generic plain',
    ])
  })

  it('are not built for a listener that never reads them', async () => {
    const { root, presented } = await bootWithPresentedTool()
    const agent = await root.agents.create()
    const types: string[] = []
    agent.subscribe((event) => types.push(event.type))
    expect((await agent.send('look both up')).reason).toBe('completed')
    expect(types.filter((type) => type.startsWith('tool-'))).toHaveLength(6)
    expect(presented).toEqual({ calls: 0, results: 0 })
  })

  it('are not built for the calls a cancel ends, when nothing listens', async () => {
    const { root, presented, waiting } = await bootWithPresentedTool(['wait'])
    const agent = await root.agents.create()
    const turn = agent.send('look it up')
    await waiting
    agent.cancel('stopped by the test')
    expect((await turn).reason).toBe('aborted')
    expect(presented).toEqual({ calls: 0, results: 0 })
  })
})
