// With @rein/checkpoint loaded, every write is recorded durably before it happens, so a turn's
// edits can be rewound; a write whose record fails does not happen.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
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

// `write` makes missing parent folders (mkdir -p); the record says how many, so a rewind that
// removes the file removes them too, when nothing else is in them.
describe('tool-fs with checkpoints: the folders a write made', () => {
  const later: RunIdentity = { ...identity, runId: 'run-2', turnId: 'session-a/2', anchor: 'msg-2' }

  it('rewind removes the folders a write created', async () => {
    const { workspace } = folders()
    mkdirSync(join(workspace, 'src'))
    const { call, root, store } = await withCheckpoints()
    expect((await call('write', { path: 'src/new/deep/a.ts', content: 'a\n' }, { identity })).isError).toBe(false)
    expect((await store.records('session-a')).map((record) => [record.path, record.createdFolders])).toEqual([['src/new/deep/a.ts', 2]])
    const plan = await root.checkpoints.plan('session-a', 'msg-1')
    expect(plan.items[0]?.folders).toEqual([
      { path: 'src/new/deep', folder: join(workspace, 'src/new/deep'), action: 'remove' },
      { path: 'src/new', folder: join(workspace, 'src/new'), action: 'remove' },
    ])
    const result = await root.checkpoints.rewind('session-a', 'msg-1')
    expect(result.failed).toEqual([])
    expect(result.restored[0]?.folders).toEqual(plan.items[0]?.folders)
    expect(readdirSync(workspace)).toEqual(['src'])
    expect(readdirSync(join(workspace, 'src'))).toEqual([])
  })

  it('keeps a folder a person put a file in after the turn, and says so in the plan and the result', async () => {
    const { workspace } = folders()
    const { call, root } = await withCheckpoints()
    await call('write', { path: 'src/new/a.ts', content: 'a\n' }, { identity })
    write(join(workspace, 'src/new/notes.txt'), 'mine\n')
    const plan = await root.checkpoints.plan('session-a', 'msg-1')
    expect(plan.items).toMatchObject([{ path: 'src/new/a.ts', action: 'remove', reason: 'keeps src/new (holds notes.txt), src (holds new/)' }])
    const result = await root.checkpoints.rewind('session-a', 'msg-1')
    expect(result.restored).toMatchObject([{ path: 'src/new/a.ts', reason: 'kept src/new (holds notes.txt), src (holds new/)' }])
    expect(result.restored[0]?.folders?.map((folder) => [folder.path, folder.action])).toEqual([['src/new', 'keep'], ['src', 'keep']])
    expect(existsSync(join(workspace, 'src/new/a.ts'))).toBe(false)
    expect(readFileSync(join(workspace, 'src/new/notes.txt'), 'utf8')).toBe('mine\n')
  })

  it('keeps a folder that existed before the turn, even an empty one', async () => {
    const { workspace } = folders()
    mkdirSync(join(workspace, 'empty'))
    const { call, root, store } = await withCheckpoints()
    await call('write', { path: 'empty/a.ts', content: 'a\n' }, { identity })
    expect((await store.records('session-a'))[0]?.createdFolders).toBeUndefined()
    const result = await root.checkpoints.rewind('session-a', 'msg-1')
    expect(result.restored).toMatchObject([{ path: 'empty/a.ts' }])
    expect(result.restored[0]?.folders).toBeUndefined()
    expect(readdirSync(join(workspace, 'empty'))).toEqual([])
  })

  it('rewinding only the later of two turns removes only the folders that turn made', async () => {
    const { workspace } = folders()
    const { call, root } = await withCheckpoints()
    await call('write', { path: 'src/a.ts', content: 'a\n' }, { identity })
    await call('write', { path: 'src/deep/b.ts', content: 'b\n' }, { identity: later })
    await call('write', { path: 'other/c.ts', content: 'c\n' }, { identity: later })
    const second = await root.checkpoints.rewind('session-a', 'msg-2')
    expect(second.restored.map((item) => item.reason)).toEqual(['removed the folder made for it: other', 'removed the folder made for it: src/deep'])
    expect(readdirSync(workspace)).toEqual(['src'])
    expect(readdirSync(join(workspace, 'src'))).toEqual(['a.ts'])
    await root.checkpoints.rewind('session-a', 'msg-1')
    expect(readdirSync(workspace)).toEqual([])
  })
})
