// Loads @rein/checkpoint and @rein/checkpoint-jsonl from a cordis.yml by package name, as a user's project does.
import { fileURLToPath } from 'node:url'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))

describe('@rein/checkpoint-jsonl in a cordis.yml', () => {
  it('provides ctx.checkpoints with a store and its Config', async () => {
    const { ctx } = await yml.load(yml.write([
      '- id: tools',
      "  name: '@rein/tools'",
      '- id: sessions',
      "  name: '@rein/session'",
      '- id: checkpoints',
      "  name: '@rein/checkpoint'",
      '  config:',
      '    tools: [write, patch]',
      '- id: checkpoint-store',
      "  name: '@rein/checkpoint-jsonl'",
    ]))
    expect([ctx.checkpoints.covers('patch'), ctx.checkpoints.covers('edit')]).toEqual([true, false])
    // The store is there: it asks ctx.sessions for the folder (not NO_CHECKPOINT_STORE).
    await expect(ctx.checkpoints.plan('none', 'anchor')).rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
  })
})
