import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { boot } from './boot.ts'


describe('defineEvent(type, {ignorable}) (issue #9)', () => {
  it('writes every event of a kind defined ignorable as ignorable, so the log loads without the plugin', async () => {
    const root = await boot()
    const plugin = await root.plugin({
      name: 'notes',
      inject: ['sessions'],
      apply: (ctx: Context) => { ctx.sessions.defineEvent('notes/seen', { ignorable: true }) },
    })
    const session = await root.sessions.create({ id: 's1', cwd: '/w' })
    expect(session.append('notes/seen', { path: 'a.ts' })).toMatchObject({ type: 'notes/seen', ignorable: true })
    session.append('turn/start', { turn: 1 })
    await session.close()
    await plugin.dispose()
    const loaded = await root.sessions.load('s1')
    expect(loaded.events.map((event) => [event.type, event.ignorable])).toEqual([['notes/seen', true], ['turn/start', undefined]])
    const reopened = await root.sessions.open('s1')
    expect(reopened.events).toHaveLength(2)
    await reopened.close()
  })

  it('still refuses a log with a kind that is neither defined nor ignorable', async () => {
    const root = await boot()
    const plugin = await root.plugin({
      name: 'plans',
      inject: ['sessions'],
      apply: (ctx: Context) => { ctx.sessions.defineEvent('plans/step') },
    })
    const session = await root.sessions.create({ id: 's2', cwd: '/w' })
    expect(session.append('plans/step', { n: 1 }).ignorable).toBeUndefined()
    await session.close()
    await plugin.dispose()
    await expect(root.sessions.load('s2')).rejects.toMatchObject({ code: 'SESSION_UNKNOWN_EVENT', details: { seq: 0, type: 'plans/step' } })
    await expect(root.sessions.open('s2')).rejects.toMatchObject({ code: 'SESSION_UNKNOWN_EVENT' })
  })

  it('refuses a second definition of a kind that disagrees on ignorable', async () => {
    const root = await boot()
    await root.inject(['sessions'], (ctx) => { ctx.sessions.defineEvent('notes/seen', { ignorable: true }) })
    await expect(root.inject(['sessions'], (ctx) => { ctx.sessions.defineEvent('notes/seen') })).rejects.toMatchObject({ code: 'EVENT_TYPE_CONFLICT' })
    await expect(root.inject(['sessions'], (ctx) => { ctx.sessions.defineEvent('turn/start', { ignorable: true }) })).rejects.toMatchObject({ code: 'EVENT_TYPE_CONFLICT' })
    // The same definition twice is fine: both plugins may write it.
    await root.inject(['sessions'], (ctx) => { ctx.sessions.defineEvent('notes/seen', { ignorable: true }) })
    const session = await root.sessions.create({ cwd: '/w' })
    expect(session.append('notes/seen', {}).ignorable).toBe(true)
  })

  it('writes summary/start ignorable whoever appends it, so a rein that predates it skips it and loads the log', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    const event = session.append('summary/start', { request: { provider: 'p', model: 'm', maxTokens: 256 }, inputTokens: 900 })
    expect(event.ignorable).toBe(true)
    expect(session.messages()).toEqual([])
  })

  it('writes llm/attempt ignorable whoever appends it', async () => {
    const root = await boot()
    const session = await root.sessions.create({ cwd: '/w' })
    const event = session.append('llm/attempt', { provider: 'p', model: 'm', retry: 0, fallback: 0, startedAt: 0, endedAt: 1, shown: true })
    expect(event.ignorable).toBe(true)
  })
})
