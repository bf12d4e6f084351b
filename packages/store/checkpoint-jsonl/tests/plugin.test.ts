import { stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import CheckpointService from '@rein/checkpoint'
import SessionService, { sessionMemory } from '@rein/session'
import { describe, expect, it } from 'vitest'
import * as plugin from '../src/index.ts'
import { tempRoot } from './temp-root.ts'

async function compose() {
  const ctx = new Context()
  await ctx.plugin(SessionService)
  await ctx.plugin(sessionMemory)
  await ctx.plugin(CheckpointService, {})
  const fiber = await ctx.plugin(plugin)
  return { ctx, fiber }
}

describe('the plugin', () => {
  it('keeps a session\'s checkpoints in its folder, and rewinds the real files from them', async () => {
    const { ctx } = await compose()
    const session = await ctx.sessions.create({ id: 'p1', cwd: '/w' })
    const workspace = await tempRoot()
    await writeFile(join(workspace, 'a.txt'), 'before')
    await ctx.checkpoints.record('p1', { anchor: 't1', root: workspace, path: 'a.txt', existed: true, before: Buffer.from('before'), after: Buffer.from('after') })
    await writeFile(join(workspace, 'a.txt'), 'after')
    expect((await stat(join(await session.folder(), plugin.LOG_FILE))).isFile()).toBe(true)
    // The session is open here, held by this test rather than an agent: rewind is told so.
    const result = await ctx.checkpoints.rewind('p1', 't1', { session })
    expect(result.restored.map((item) => item.path)).toEqual(['a.txt'])
    await session.close()
  })

  it('refuses a session that is not open here, and nothing is written', async () => {
    const { ctx } = await compose()
    await expect(ctx.checkpoints.record('nobody', { anchor: 't1', root: '/w', path: 'a', existed: false, before: null, after: Buffer.from('x') }))
      .rejects.toMatchObject({ code: 'SESSION_NOT_OPEN' })
  })

  it('unregisters and closes the store when disposed', async () => {
    const { ctx, fiber } = await compose()
    await ctx.sessions.create({ id: 'p1', cwd: '/w' })
    await ctx.checkpoints.record('p1', { anchor: 't1', root: '/w', path: 'a', existed: false, before: null, after: Buffer.from('x') })
    await fiber.dispose()
    await expect(ctx.checkpoints.plan('p1', 't1')).rejects.toMatchObject({ code: 'NO_CHECKPOINT_STORE' })
    await ctx.plugin(plugin)
    expect((await ctx.checkpoints.plan('p1', 't1')).items.map((item) => item.path)).toEqual(['a'])
  })
})
