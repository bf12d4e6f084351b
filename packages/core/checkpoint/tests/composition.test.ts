// Loads @rein/checkpoint from a cordis.yml by package name, as a user's project does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadComposition, type Composition } from '@rein/compose'
import { afterEach, describe, expect, it } from 'vitest'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
let composition: Composition | undefined
let dir: string | undefined

afterEach(async () => {
  await composition?.dispose()
  composition = undefined
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('@rein/checkpoint in a cordis.yml', () => {
  it('provides ctx.checkpoints with its Config', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-checkpoint-yml-'))
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, [
      '- id: tools',
      "  name: '@rein/tools'",
      '- id: checkpoints',
      "  name: '@rein/checkpoint'",
      '  config:',
      '    tools: [write, patch]',
      '',
    ].join('\n'))
    composition = await loadComposition({ file, resolveFrom: packageDir })
    const { ctx } = composition
    expect([ctx.checkpoints.covers('patch'), ctx.checkpoints.covers('edit')]).toEqual([true, false])
    // No store in this composition: records are refused, so covered tools do not write.
    await expect(ctx.checkpoints.plan('none', 'anchor')).rejects.toMatchObject({ code: 'NO_CHECKPOINT_STORE' })
  })
})
