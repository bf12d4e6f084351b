// `rein show`'s checkpoint marks count each turn's own files, however late its records landed.
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, MemoryCheckpointStore } from '@rein/checkpoint'
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { changesPerTurn } from '../src/rewind/turns.ts'

const turnStart = (seq: number, turn: number, anchor: string): SessionEvent => ({ seq, type: 'turn/start', time: '2026-01-01T00:00:00.000Z', data: { turn, anchor } })

describe('files per turn', () => {
  it('counts a turn\'s files by its own records, even those that landed after a later turn\'s (a background build)', async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, { snapshot: { enabled: false } })
    ctx.checkpoints.registerStore(new MemoryCheckpointStore())
    const record = (anchor: string, path: string) => ctx.checkpoints.record('s1', { anchor, root: '/w', path, existed: false, before: null, after: Buffer.from(path) })
    await record('m2', 'src.ts')
    await record('m1', 'dist.js')
    await record('m1', 'dist.map')
    await record('m2', 'dist.js')
    const changes = await changesPerTurn(ctx.checkpoints, 's1', [turnStart(0, 1, 'm1'), turnStart(5, 2, 'm2')])
    expect([...changes].sort((a, b) => a[0] - b[0])).toEqual([[1, { files: 2, folders: 0 }], [2, { files: 2, folders: 0 }]])
  })

  it('counts a folder a command made or removed as a folder, not as one of the turn\'s files, even beside a file of its path', async () => {
    const ctx = new Context()
    await ctx.plugin(CheckpointService, { snapshot: { enabled: false } })
    ctx.checkpoints.registerStore(new MemoryCheckpointStore())
    const folder = (anchor: string, path: string, existed: boolean) => ctx.checkpoints.record('s1', { anchor, root: '/w', path, folder: true, existed, before: null, after: null })
    await folder('m1', 'out', false)
    await folder('m1', 'build/out', false)
    await folder('m2', 'out', true)
    await ctx.checkpoints.record('s1', { anchor: 'm2', root: '/w', path: 'out', existed: false, before: null, after: Buffer.from('x') })
    const changes = await changesPerTurn(ctx.checkpoints, 's1', [turnStart(0, 1, 'm1'), turnStart(5, 2, 'm2')])
    expect([...changes].sort((a, b) => a[0] - b[0])).toEqual([[1, { files: 0, folders: 2 }], [2, { files: 1, folders: 1 }]])
  })
})
