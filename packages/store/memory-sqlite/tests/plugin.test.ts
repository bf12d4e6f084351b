import { access, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import MemoryService from '@rein/memory'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as plugin from '../src/index.ts'
import { tempRoot } from './temp-root.ts'

const exists = (path: string) => access(path).then(() => true, () => false)

let reinHome: string
const savedHome = process.env.REIN_HOME

beforeEach(async () => {
  reinHome = join(await tempRoot(), 'rein-home')
  process.env.REIN_HOME = reinHome
})

afterEach(() => {
  if (savedHome === undefined) delete process.env.REIN_HOME
  else process.env.REIN_HOME = savedHome
})

async function compose(config: plugin.Config = {}) {
  const ctx = new Context()
  await ctx.plugin(MemoryService, {})
  const fiber = await ctx.plugin(plugin, config)
  return { ctx, fiber }
}

describe('the plugin', () => {
  it('keeps ctx.memory\'s entries in $REIN_HOME/memory.db: supersede, refresh, recall', async () => {
    const { ctx, fiber } = await compose()
    const file = join(reinHome, 'memory.db')
    expect(plugin.defaultMemoryFile()).toBe(file)
    expect(ctx.memory.hasStore()).toBe(true)
    const old = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'Prefers npm', source: { sessionId: 's1' } })
    const correction = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'Prefers pnpm', source: { sessionId: 's1' }, supersedes: old.entry.id })
    const again = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'prefers PNPM.', source: { sessionId: 's2' } })
    expect(again).toMatchObject({ outcome: 'refreshed', entry: { id: correction.entry.id } })
    expect((await ctx.memory.recall({ scopes: ['user'], query: 'npm pnpm', limit: 10 })).map((entry) => entry.id)).toEqual([correction.entry.id])
    expect(await ctx.memory.get(old.entry.id)).toMatchObject({ retiredBy: correction.entry.id })
    expect(await exists(file)).toBe(true)
    await fiber.dispose()
  })

  it('unregisters and closes the store when disposed, and a reload finds the entries', async () => {
    const file = join(await tempRoot(), 'custom', 'memory.db')
    const { ctx, fiber } = await compose({ file })
    const { entry } = await ctx.memory.write({ scope: 'user', type: 'fact', content: 'Lives in Lisbon', source: { sessionId: 's1' } })
    expect(await exists(`${file}-wal`)).toBe(true)
    await fiber.dispose()
    expect(ctx.memory.hasStore()).toBe(false)
    // The last connection to close folds the WAL back and removes it: the store was closed.
    expect(await exists(`${file}-wal`)).toBe(false)
    await expect(ctx.memory.write({ scope: 'user', type: 'fact', content: 'x', source: { sessionId: 's1' } })).rejects.toMatchObject({ code: 'NO_MEMORY_STORE' })
    const reloaded = await ctx.plugin(plugin, { file })
    expect(await ctx.memory.list()).toEqual([entry])
    await reloaded.dispose()
  })

  it('loads on a file it cannot use, and every memory call fails with the error naming the file', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await mkdir(file)
    const ctx = new Context()
    await ctx.plugin(MemoryService, {})
    await ctx.plugin(plugin, { file })
    await expect(ctx.memory.recall({ scopes: ['user'], limit: 5 })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', details: { file } })
  })

  it('a file it cannot use is not only logged: the store says it is unavailable and memory/unavailable is emitted, naming the file', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, 'not a database, not at all '.repeat(200))
    const ctx = new Context()
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    await ctx.plugin(MemoryService, {})
    await ctx.plugin(plugin, { file })
    expect(told).toEqual([expect.objectContaining({ code: 'MEMORY_STORE_CORRUPT', details: expect.objectContaining({ file }) })])
    // Still registered, so `rein memory list` reports the error naming the file.
    expect(ctx.memory.hasStore()).toBe(true)
    await expect(ctx.memory.list()).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', message: expect.stringContaining(file) })
  })

  it('a fractional expiresAt is INVALID_ARGS before it reaches the INTEGER column, not MEMORY_STORE_FAILED', async () => {
    const { ctx, fiber } = await compose()
    const expiresAt = Date.now() + 60_000.5
    await expect(ctx.memory.write({ scope: 'user', type: 'fact', content: 'On call.', source: { sessionId: 's1' }, expiresAt })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    const { entry } = await ctx.memory.write({ scope: 'user', type: 'fact', content: 'On call.', source: { sessionId: 's1' } })
    await expect(ctx.memory.update(entry.id, { expiresAt })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await fiber.dispose()
  })
})
