// With @rein/checkpoint loaded, every write is recorded durably before it happens, so a turn's
// edits can be rewound; a write whose record fails does not happen.
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import CheckpointService, { MemoryCheckpointStore } from '@rein/checkpoint'
import type { RunIdentity } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { boot, useFolders, write } from './harness.ts'

const folders = useFolders()
const identity: RunIdentity = { agent: 'main', sessionId: 'session-a', conversationId: 'session-a', runId: 'run-1', turnId: 'session-a/1', anchor: 'msg-1', depth: 0 }

async function withCheckpoints(store = new MemoryCheckpointStore()) {
  const booted = await boot(folders())
  await booted.root.plugin(CheckpointService, {})
  booted.root.checkpoints.registerStore(store)
  return { ...booted, store }
}

describe('tool-fs with checkpoints', () => {
  it('records each write and edit before making it, so rewinding the turn restores the files', async () => {
    const file = join(folders().workspace, 'a.txt')
    write(file, 'old\n')
    const { call, root, store } = await withCheckpoints()
    await call('read', { path: 'a.txt' }, { identity })
    expect((await call('edit', { path: 'a.txt', old_string: 'old', new_string: 'new' }, { identity })).isError).toBe(false)
    expect((await call('write', { path: 'made.txt', content: 'created\n' }, { identity })).isError).toBe(false)
    const records = await store.records('session-a')
    expect(records.map((record) => [record.path, record.existed, record.anchor])).toEqual([['a.txt', true, 'msg-1'], ['made.txt', false, 'msg-1']])
    const result = await root.checkpoints.rewind('session-a', 'msg-1')
    expect(result.failed).toEqual([])
    expect(readFileSync(file, 'utf8')).toBe('old\n')
    expect(existsSync(join(folders().workspace, 'made.txt'))).toBe(false)
  })

  it('records the mode of the file it edits (none for a file it creates)', async () => {
    const file = join(folders().workspace, 'run.sh')
    write(file, '#!/bin/sh\necho old\n')
    chmodSync(file, 0o750)
    const { call, store } = await withCheckpoints()
    await call('read', { path: 'run.sh' }, { identity })
    expect((await call('edit', { path: 'run.sh', old_string: 'old', new_string: 'new' }, { identity })).isError).toBe(false)
    expect((await call('write', { path: 'made.txt', content: 'created\n' }, { identity })).isError).toBe(false)
    const records = await store.records('session-a')
    expect(records.map((record) => [record.path, record.mode])).toEqual([['run.sh', 0o750], ['made.txt', undefined]])
    expect(statSync(file).mode & 0o7777).toBe(0o750)
  })

  it('does not write when the record cannot be made durable, and says why', async () => {
    const file = join(folders().workspace, 'a.txt')
    write(file, 'old\n')
    const store = new MemoryCheckpointStore()
    store.append = async () => { throw new Error('disk full') }
    const { call } = await withCheckpoints(store)
    await call('read', { path: 'a.txt' }, { identity })
    const result = await call('edit', { path: 'a.txt', old_string: 'old', new_string: 'new' }, { identity })
    expect(result).toMatchObject({ isError: true, error: { code: 'CHECKPOINT_FAILED' } })
    expect(result.isError && result.error.message).toContain('disk full')
    expect(readFileSync(file, 'utf8')).toBe('old\n')
  })
})
