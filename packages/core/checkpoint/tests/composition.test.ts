// Loads @rein/checkpoint from a cordis.yml by package name, as a user's project does.
import { fileURLToPath } from 'node:url'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))

describe('@rein/checkpoint in a cordis.yml', () => {
  it('provides ctx.checkpoints with its Config', async () => {
    const { ctx } = await yml.load(yml.write([
      '- id: tools',
      "  name: '@rein/tools'",
      '- id: checkpoints',
      "  name: '@rein/checkpoint'",
      '  config:',
      '    tools: [write, patch]',
    ]))
    expect([ctx.checkpoints.covers('patch'), ctx.checkpoints.covers('edit')]).toEqual([true, false])
    // No store in this composition: records are refused, so covered tools do not write.
    await expect(ctx.checkpoints.plan('none', 'anchor')).rejects.toMatchObject({ code: 'NO_CHECKPOINT_STORE' })
  })
})
