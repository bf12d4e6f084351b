// A subagent's tool cards are built only for someone who reads them: its runner listens to the
// child for its progress, but reads no card.
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { boot, byTask, call } from './harness.ts'

/** A parent that delegates to a child that calls `look`, whose presenters count their runs. */
async function delegating() {
  const booted = await boot(byTask({
    'find x': [[call('subagent', { description: 'look it up', prompt: 'where is x?' }, 'c1')], [{ text: 'done' }]],
    'where is x?': [[call('look', { word: 'x' }, 'k1')], [{ text: 'x is in the drawer' }]],
  }))
  const presented = { calls: 0, results: 0 }
  booted.root.tools.register(defineTool({
    name: 'look',
    description: 'Looks a word up.',
    parameters: { word: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    execute: (args) => `${args.word}: in the drawer`,
    presentCall(args) {
      presented.calls++
      return { card: 'generic', title: `look ${args.word}` }
    },
    presentResult(args) {
      presented.results++
      return { card: 'generic', title: `looked ${args.word}`, text: 'found' }
    },
  }))
  return { ...booted, presented }
}

describe('a subagent\'s tool cards', () => {
  it('are not built when nobody listens to the parent', async () => {
    const { create, presented } = await delegating()
    const parent = await create()
    expect((await parent.send('find x')).text).toBe('done')
    expect(presented).toEqual({ calls: 0, results: 0 })
  })

  it('reach the parent\'s listeners under the call, built once each', async () => {
    const { create, presented } = await delegating()
    const parent = await create()
    const titles: string[] = []
    parent.subscribe((event) => {
      if (event.type === 'subagent' && (event.event.type === 'tool-start' || event.event.type === 'tool-end')) titles.push(`${event.event.type} ${event.event.card.title}`)
    })
    await parent.send('find x')
    expect(titles).toEqual(['tool-start look x', 'tool-end looked x'])
    expect(presented).toEqual({ calls: 1, results: 1 })
  })
})
