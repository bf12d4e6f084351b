import { describe, expect, it } from 'vitest'
import { boot } from './boot.ts'


describe('child sessions (issue #9)', () => {
  it('records the parent session, run and call, and a depth one below the parent\'s', async () => {
    const root = await boot()
    const parent = await root.sessions.create({ id: 'p', cwd: '/w' })
    const child = await root.sessions.create({ id: 'c', cwd: '/w', parent: { sessionId: 'p', runId: 'r1', callId: 'call-1' } })
    expect(child.header).toMatchObject({ parentSessionId: 'p', parentRunId: 'r1', parentCallId: 'call-1', depth: 1 })
    const grandchild = await root.sessions.create({ id: 'g', cwd: '/w', parent: { sessionId: 'c', runId: 'r2', callId: 'call-2' } })
    expect(grandchild.header).toMatchObject({ parentSessionId: 'c', parentRunId: 'r2', parentCallId: 'call-2', depth: 2 })
    await Promise.all([parent.close(), child.close(), grandchild.close()])
    const summaries = Object.fromEntries((await root.sessions.list()).map((summary) => [summary.id, summary]))
    expect(summaries.p).not.toHaveProperty('parentSessionId')
    expect(summaries.p).toMatchObject({ depth: 0 })
    expect(summaries.g).toMatchObject({ parentSessionId: 'c', parentRunId: 'r2', parentCallId: 'call-2', depth: 2 })
  })

  it('refuses a parent that does not exist', async () => {
    const root = await boot()
    await expect(root.sessions.create({ id: 'c', cwd: '/w', parent: { sessionId: 'missing', runId: 'r', callId: 'x' } })).rejects.toMatchObject({
      code: 'PARENT_SESSION_NOT_FOUND',
      details: { parentSessionId: 'missing' },
    })
    // Nothing was created under the refused id.
    expect(await root.sessions.list()).toEqual([])
  })

  it('refuses a parent given both ways', async () => {
    const root = await boot()
    await root.sessions.create({ id: 'p', cwd: '/w' })
    await expect(root.sessions.create({ cwd: '/w', parentSessionId: 'p', parent: { sessionId: 'p', runId: 'r', callId: 'x' } })).rejects.toMatchObject({ code: 'INVALID_SESSION_OPTIONS' })
    await expect(root.sessions.create({ cwd: '/w', depth: 3, parent: { sessionId: 'p', runId: 'r', callId: 'x' } })).rejects.toMatchObject({ code: 'INVALID_SESSION_OPTIONS' })
  })

  it('keeps the deprecated parentSessionId and depth options', async () => {
    const root = await boot()
    const child = await root.sessions.create({ cwd: '/w', parentSessionId: 'elsewhere', depth: 4 })
    expect(child.header).toMatchObject({ parentSessionId: 'elsewhere', depth: 4 })
    expect(child.header).not.toHaveProperty('parentRunId')
  })
})
