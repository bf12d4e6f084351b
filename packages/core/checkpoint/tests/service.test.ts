import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { defineTool, ToolRegistry, type RunIdentity, type ToolRun } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { CheckpointService, MemoryCheckpointStore, type CheckpointRecord } from '../src/index.ts'
import { setup, text } from './harness.ts'

const identity: RunIdentity = Object.freeze({
  agent: 'main', sessionId: 's1', conversationId: 's1', runId: 'run-1', turnId: 'turn-1', anchor: 'msg-1', depth: 0,
})

describe('record', () => {
  it('refuses without a store, so the write does not happen', async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    await expect(ctx.checkpoints.record('s1', { anchor: 'a', root: '/w', path: 'x', existed: false, before: null, after: new Uint8Array() }))
      .rejects.toMatchObject({ code: 'NO_CHECKPOINT_STORE' })
  })

  it('refuses a malformed change with INVALID_CHECKPOINT', async () => {
    const { ctx } = await setup()
    const bad = [
      { anchor: '', root: '/w', path: 'x', existed: false, before: null, after: null },
      { anchor: 'a', root: '/w', path: 'x', existed: true, before: null, after: null },
      { anchor: 'a', root: '/w', path: 'x', existed: true, before: 'text' as unknown as Uint8Array, after: null },
    ]
    for (const entry of bad) await expect(ctx.checkpoints.record('s1', entry)).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
  })

  it('numbers records per session', async () => {
    const { ctx } = await setup()
    const change = { anchor: 'a', root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') }
    const seqs = [await ctx.checkpoints.record('s1', change), await ctx.checkpoints.record('s2', change), await ctx.checkpoints.record('s1', change)]
    expect(seqs.map((record) => record.seq)).toEqual([1, 1, 2])
  })

  it('says which tools are covered, from Config', async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    expect(['write', 'edit', 'multi_edit', 'bash', 'read'].map((name) => ctx.checkpoints.covers(name))).toEqual([true, true, true, false, false])
    const custom = new Context()
    await custom.plugin(CheckpointService, { tools: ['patch'] })
    expect([custom.checkpoints.covers('patch'), custom.checkpoints.covers('write')]).toEqual([true, false])
  })

  it('refuses a second store while one is registered', async () => {
    const { ctx } = await setup()
    expect(() => ctx.checkpoints.registerStore(new MemoryCheckpointStore())).toThrow(expect.objectContaining({ code: 'DUPLICATE_CHECKPOINT_STORE' }))
  })
})

describe('run.checkpoint in a tool body', () => {
  async function withTools() {
    const ctx = new Context()
    await ctx.plugin(ToolRegistry, { askFor: [] })
    const fiber = await ctx.plugin(CheckpointService, {})
    ctx.checkpoints.registerStore(new MemoryCheckpointStore())
    const seen: ToolRun[] = []
    const recorded: CheckpointRecord[] = []
    ctx.tools.register(defineTool({
      name: 'write',
      description: 'Writes.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      effects: ['write'],
      execute: async (_args, run) => {
        seen.push(run)
        if (run.checkpoint) recorded.push(await run.checkpoint.record({ root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') }))
        return 'ok'
      },
    }))
    const execute = (context = {}) => ctx.tools.execute({ callId: 'c1', name: 'write', arguments: '{}', signal: new AbortController().signal, context })
    return { ctx, fiber, seen, recorded, execute }
  }

  it('records with the call\'s session and anchor', async () => {
    const { ctx, recorded, execute } = await withTools()
    expect((await execute({ identity, sessionId: 's1' })).isError).toBe(false)
    expect(recorded).toEqual([expect.objectContaining({ anchor: 'msg-1', seq: 1, path: 'x', before: null })])
    expect((await ctx.checkpoints.plan('s1', 'msg-1')).items).toHaveLength(1)
  })

  it('is absent when the call has no turn to belong to', async () => {
    const { seen, execute } = await withTools()
    await execute({ sessionId: 's1' })
    expect(seen[0]).not.toHaveProperty('checkpoint')
  })

  it('goes away with the plugin, and the store is closed', async () => {
    const { ctx, fiber, seen, execute } = await withTools()
    await fiber.dispose()
    await execute({ identity, sessionId: 's1' })
    expect(seen[0]).not.toHaveProperty('checkpoint')
    expect(ctx.get('checkpoints')).toBeUndefined()
  })
})

describe('dispose', () => {
  it('closes the store when its owner is disposed, and then refuses records', async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    const inner = new MemoryCheckpointStore()
    let closed = 0
    const store = { append: inner.append.bind(inner), records: inner.records.bind(inner), blob: inner.blob.bind(inner), close: async () => { closed++ } }
    const owner = await ctx.plugin({ name: 'store-owner', inject: ['checkpoints'], apply: (scoped: Context) => { scoped.checkpoints.registerStore(store) } })
    const change = { anchor: 'a', root: '/w', path: 'x', existed: false, before: null, after: Buffer.from('x') }
    await ctx.checkpoints.record('s1', change)
    await owner.dispose()
    expect(closed).toBe(1)
    await expect(ctx.checkpoints.record('s1', change)).rejects.toMatchObject({ code: 'NO_CHECKPOINT_STORE' })
  })
})

describe('rewind while a run is active', () => {
  it('is refused with SESSION_BUSY while the session\'s agent runs a turn, and nothing is touched', async () => {
    const { ctx, workspace, edit } = await setup()
    let status: 'idle' | 'running' = 'running'
    ctx.provide('agents', { find: (sessionId: string) => sessionId === 's1' ? { status } : undefined })
    await edit('t1', 'a.txt', 'a1')
    await expect(ctx.checkpoints.rewind('s1', 't1')).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    expect(await text(join(workspace, 'a.txt'))).toBe('a1')
    expect((await ctx.checkpoints.plan('s1', 't1')).items).toHaveLength(1)
    status = 'idle'
    expect((await ctx.checkpoints.rewind('s1', 't1')).restored).toHaveLength(1)
  })
})
