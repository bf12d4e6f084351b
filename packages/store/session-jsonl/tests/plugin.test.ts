import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Config, defaultSessionRoot, resolveStoreOptions } from '../src/index.ts'

describe('plugin config', () => {
  it('defaults the root to ~/.rein/sessions and the batch delay to 0', () => {
    expect(defaultSessionRoot()).toBe(join(homedir(), '.rein', 'sessions'))
    expect(resolveStoreOptions(Config({}))).toEqual({ root: join(homedir(), '.rein', 'sessions'), batchDelayMs: 0 })
  })

  it('defaults the root to $REIN_HOME/sessions when REIN_HOME is set (issue #8)', () => {
    const before = process.env.REIN_HOME
    process.env.REIN_HOME = '/data/rein-home'
    try {
      expect(defaultSessionRoot()).toBe(join('/data/rein-home', 'sessions'))
      expect(resolveStoreOptions(Config({})).root).toBe(join('/data/rein-home', 'sessions'))
    } finally {
      if (before === undefined) delete process.env.REIN_HOME
      else process.env.REIN_HOME = before
    }
  })

  it('keeps a configured root and delay', () => {
    expect(resolveStoreOptions(Config({ root: '/data/sessions', batchDelayMs: 20 }))).toEqual({ root: '/data/sessions', batchDelayMs: 20 })
  })
})

describe('the plugin', () => {
  it('registers the store on ctx.sessions while loaded, and a session survives a new process view', async () => {
    const { Context } = await import('@deepseek-ai/cordis')
    const { default: SessionService } = await import('@rein/session')
    const { mkdtempSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const plugin = await import('../src/index.ts')
    const root = mkdtempSync(join(tmpdir(), 'rein-jsonl-plugin-'))
    try {
      const ctx = new Context()
      await ctx.plugin(SessionService)
      const fiber = await ctx.plugin(plugin, { root })
      const session = await ctx.sessions.create({ id: 'p1', cwd: '/w' })
      session.append('turn/start', { turn: 1 })
      await session.close()
      expect((await ctx.sessions.list()).map((summary) => summary.id)).toEqual(['p1'])
      await fiber.dispose()
      await expect(ctx.sessions.list()).rejects.toMatchObject({ code: 'NO_SESSION_STORE' })
      await ctx.plugin(plugin, { root })
      expect((await ctx.sessions.load('p1')).events.map((event) => event.type)).toEqual(['turn/start'])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
