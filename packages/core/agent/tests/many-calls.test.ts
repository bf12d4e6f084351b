import { defineTool } from '@rein/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { boot } from './fixtures.ts'

const warnings: Error[] = []
const onWarning = (warning: Error) => { warnings.push(warning) }
afterEach(() => {
  process.off('warning', onWarning)
  warnings.length = 0
})

describe('a turn with many tool calls side by side', () => {
  it('prints no MaxListenersExceededWarning when eight calls and their wrappers wait on the turn at once', async () => {
    process.on('warning', onWarning)
    // As many as run at once by default (maxParallelToolCalls).
    const calls = 8
    const { root } = await boot([
      Array.from({ length: calls }, (_, index) => ({ toolCall: { id: `c${index}`, name: 'look', arguments: '{}' } })),
      [{ text: 'done' }],
    ])
    // Every call waits until all have started, so each one's listeners are on the turn's signal together.
    let started = 0
    let release: () => void = () => {}
    const all = new Promise<void>((resolve) => { release = resolve })
    root.tools.register(defineTool({
      name: 'look',
      description: 'Looks; safe beside others.',
      parameters: {},
      isConcurrencySafe: true,
      replaySafe: true,
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async () => {
        if (++started === calls) release()
        await all
        return 'seen'
      },
    }))
    // Two wrappers, as checkpoint and telemetry add in a composition.
    root.tools.wrapExecute((call, next) => next())
    root.tools.wrapExecute((call, next) => next())
    const agent = await root.agents.create()
    expect(await agent.send('look everywhere')).toMatchObject({ reason: 'completed' })
    // A warning is emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve))
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning').map((warning) => warning.message)).toEqual([])
  })
})
