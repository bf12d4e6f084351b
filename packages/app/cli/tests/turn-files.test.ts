// `rein show`'s checkpoint marks count each turn's own files, however late its records landed.
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, MemoryCheckpointStore } from '@rein/checkpoint'
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { filesPerTurn } from '../src/rewind/turns.ts'

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
    const files = await filesPerTurn(ctx.checkpoints, 's1', [turnStart(0, 1, 'm1'), turnStart(5, 2, 'm2')])
    expect([...files].sort((a, b) => a[0] - b[0])).toEqual([[1, 2], [2, 2]])
  })
})
