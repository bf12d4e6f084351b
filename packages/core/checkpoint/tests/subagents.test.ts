// A subagent's edits belong to its root run's turn: recorded under the root session, rewound with
// it, and a rewind waits while any agent of the conversation runs. Real agents, sessions on disk.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionService } from '@rein/session'
import { validateSessionInvariants } from '@rein/testkit'
import { describe, expect, it, vi } from 'vitest'
import { MemoryCheckpointStore, type CheckpointEntry } from '../src/index.ts'
import { text } from './harness.ts'
import { anchorOf, bootStack, call, say } from './stack.ts'

const names = (items: readonly { path: string }[]) => items.map((item) => item.path).sort()

describe('a subagent\'s edits', () => {
  it('are recorded under the root session and rewound with the parent\'s turn', async () => {
    const { root, llm, workspace, checkpoints, children } = await bootStack({
      go: [call('spawn', { task: 'child task' }), call('write', { path: 'a.txt', text: 'parent' }), say('parent done')],
      'child task': [call('write', { path: 'b.txt', text: 'child' }), say('child done')],
    })
    await writeFile(join(workspace, 'b.txt'), 'b0')
    const parent = await root.agents.create({ cwd: workspace })
    await parent.send('go')
    const [child] = children
    const anchor = anchorOf(parent)
    expect(anchorOf(child!)).toBe(anchor)
    expect((await checkpoints.records(parent.session.id)).map((record) => [record.path, record.anchor])).toEqual([['b.txt', anchor], ['a.txt', anchor]])
    expect(await checkpoints.records(child!.session.id)).toEqual([])

    const requests = llm.requests.length
    const result = await root.checkpoints.rewind(parent.session.id, anchor)
    expect(names(result.restored)).toEqual(['a.txt', 'b.txt'])
    expect(await text(join(workspace, 'a.txt'))).toBeNull()
    expect(await text(join(workspace, 'b.txt'))).toBe('b0')
    expect(llm.requests).toHaveLength(requests)
    expect(validateSessionInvariants(parent.session.events)).toEqual([])
  })

  it('go under the child\'s own session when the root session is not open here (a child resumed on its own)', async () => {
    // A store that keeps records in session folders, as checkpoint-jsonl does: it reaches only open sessions.
    const open: { sessions?: SessionService } = {}
    const inner = new MemoryCheckpointStore()
    const folderBound = {
      append: async (sessionId: string, entry: CheckpointEntry) => {
        await open.sessions!.folder(sessionId)
        return inner.append(sessionId, entry)
      },
      records: (sessionId: string) => inner.records(sessionId),
      blob: (sessionId: string, hash: string) => inner.blob(sessionId, hash),
    }
    const { root, workspace, children } = await bootStack({
      go: [call('spawn', { task: 'child task' }), say('parent done')],
      'child task': [call('write', { path: 'b.txt', text: 'child' }), say('child done'), call('write', { path: 'c.txt', text: 'later' }), say('child done again')],
    }, { checkpoints: folderBound })
    open.sessions = root.sessions
    const parent = await root.agents.create({ cwd: workspace })
    await parent.send('go')
    const anchor = anchorOf(parent)
    const childId = children[0]!.session.id
    await children[0]!.close()
    await parent.close()

    const { agent: child } = await root.agents.resume(childId)
    const result = await child.send('more')
    expect(result.reason).toBe('completed')
    expect(await text(join(workspace, 'c.txt'))).toBe('later')
    expect((await inner.records(parent.session.id)).map((record) => record.path)).toEqual(['b.txt'])
    expect((await inner.records(childId)).map((record) => [record.path, record.anchor])).toEqual([['c.txt', anchor]])
  })
})

describe('rewind while an agent of the conversation runs', () => {
  it('is refused with SESSION_BUSY while a subagent still runs after its parent\'s turn ended, and nothing is touched', async () => {
    const { root, workspace, children, background, gates, gate } = await bootStack({
      go: [call('spawn_background', { task: 'child task' }), say('parent done')],
      'child task': [call('write', { path: 'b.txt', text: 'child' }), call('wait', { key: 'child' }), say('child done')],
    })
    const parent = await root.agents.create({ cwd: workspace })
    await parent.send('go')
    await vi.waitFor(() => expect(gates.has('child')).toBe(true))
    const [child] = children
    expect([parent.status, child!.status]).toEqual(['idle', 'running'])
    const anchor = anchorOf(parent)

    await expect(root.checkpoints.rewind(parent.session.id, anchor)).rejects.toMatchObject({
      code: 'SESSION_BUSY', details: { sessionId: parent.session.id, running: child!.session.id },
    })
    expect(await text(join(workspace, 'b.txt'))).toBe('child')

    gate('child')()
    await Promise.all(background)
    expect(names((await root.checkpoints.rewind(parent.session.id, anchor)).restored)).toEqual(['b.txt'])
    expect(await text(join(workspace, 'b.txt'))).toBeNull()
  })

  it('is refused while the parent\'s own turn runs (the subagent inside it included)', async () => {
    const { root, workspace, children, gates, gate } = await bootStack({
      go: [call('spawn', { task: 'child task' }), say('parent done')],
      'child task': [call('write', { path: 'b.txt', text: 'child' }), call('wait', { key: 'child' }), say('child done')],
    })
    const parent = await root.agents.create({ cwd: workspace })
    const turn = parent.send('go')
    await vi.waitFor(() => expect(gates.has('child')).toBe(true))
    const anchor = anchorOf(parent)
    await expect(root.checkpoints.rewind(parent.session.id, anchor)).rejects.toMatchObject({ code: 'SESSION_BUSY', details: { running: parent.session.id } })
    // Rewinding the child's session is refused too: its own agent is running.
    await expect(root.checkpoints.rewind(children[0]!.session.id, anchor)).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    gate('child')()
    await turn
    expect(await text(join(workspace, 'b.txt'))).toBe('child')
  })
})
