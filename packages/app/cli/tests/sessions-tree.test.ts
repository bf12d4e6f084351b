import { join } from 'node:path'
import { SESSION_FORMAT_VERSION, type SessionHeader } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)

/** Stores a session whose one event happened at second `second`, with `parent` as its header's parent. */
async function stored(p: Project, id: string, second: number, parent?: { sessionId: string; depth: number }, task = `task ${id}`) {
  const store = new JsonlSessionStore({ root: join(p.home, 'sessions') })
  const time = `2026-12-01T10:00:${String(second).padStart(2, '0')}.000Z`
  const header: SessionHeader = {
    formatVersion: SESSION_FORMAT_VERSION,
    id,
    createdAt: time,
    cwd: p.dir,
    depth: parent ? parent.depth : 0,
    ...(parent ? { parentSessionId: parent.sessionId, parentRunId: `run-of-${id}`, parentCallId: `call-of-${id}` } : {}),
  }
  await store.create(header)
  await store.append(id, [{ seq: 0, type: 'user/message', time, data: { message: { id: 'u', role: 'user', content: [{ type: 'text', text: task }], source: { kind: 'user' } } } }])
  await store.close(id)
}

/** The indent and id that start each line of `rein sessions`. */
function outline(stdout: string): string[] {
  return stdout.trimEnd().split('\n').map((line) => /^ *\S+/.exec(line)?.[0] ?? line)
}

describe('rein sessions: the tree (issue #9)', () => {
  it('shows children under their parent, newest first at each level, and sessions whose parent is missing at the top', async () => {
    const p = await setUp([])
    await stored(p, 'r1', 3)
    await stored(p, 'c1', 6, { sessionId: 'r1', depth: 1 })
    await stored(p, 'g1', 2, { sessionId: 'c1', depth: 2 })
    await stored(p, 'r2', 5)
    await stored(p, 'c2', 4, { sessionId: 'r2', depth: 1 })
    await stored(p, 'c3', 8, { sessionId: 'r2', depth: 1 })
    await stored(p, 'o1', 1, { sessionId: 'deleted', depth: 3 })
    const list = await rein(p.dir, ['sessions'])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    expect(outline(list.stdout)).toEqual([
      'r2',
      '  c3',
      '  c2',
      'r1',
      '  c1',
      '    g1',
      'o1',
    ])
    expect(list.stdout).toContain('  task c3\n')
  })

  it('lines its columns up whatever the ids\' lengths and the children\'s indent', async () => {
    const p = await setUp([])
    await stored(p, 'r1', 3)
    await stored(p, 'a-much-longer-id-than-the-others', 4)
    await stored(p, 'c1', 6, { sessionId: 'r1', depth: 1 })
    await stored(p, 'g1', 2, { sessionId: 'c1', depth: 2 })
    const list = await rein(p.dir, ['sessions'])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    const columns = lines.map((line) => line.indexOf('2026-12-01'))
    expect(new Set(columns).size).toBe(1)
    expect(columns[0]).toBe('a-much-longer-id-than-the-others'.length + 2)
  })

  it('shows every session once even when headers name each other as parents', async () => {
    const p = await setUp([])
    await stored(p, 'x', 7, { sessionId: 'y', depth: 1 })
    await stored(p, 'y', 1, { sessionId: 'x', depth: 1 })
    await stored(p, 'self', 5, { sessionId: 'self', depth: 1 })
    await stored(p, 'top', 3)
    const list = await rein(p.dir, ['sessions'])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    expect(outline(list.stdout)).toEqual(['top', 'x', '  y', 'self'])
  })

  it('keeps --json flat: one session per line with its parent fields', async () => {
    const p = await setUp([])
    await stored(p, 'r1', 3)
    await stored(p, 'c1', 6, { sessionId: 'r1', depth: 1 })
    const json = await rein(p.dir, ['sessions', '--json'])
    expect(json).toMatchObject({ code: 0, stderr: '' })
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map((line) => line.id)).toEqual(['c1', 'r1'])
    expect(lines[0]).toMatchObject({ parentSessionId: 'r1', parentRunId: 'run-of-c1', parentCallId: 'call-of-c1', depth: 1 })
    expect(lines[1]).not.toHaveProperty('parentSessionId')
  })

  it('lists a session that ended for a reason a newer rein wrote, showing the reason as it is', async () => {
    const p = await setUp([])
    await stored(p, 'known', 1)
    const store = new JsonlSessionStore({ root: join(p.home, 'sessions') })
    const time = '2026-12-01T10:00:02.000Z'
    await store.create({ formatVersion: SESSION_FORMAT_VERSION, id: 'newer', createdAt: time, cwd: p.dir, depth: 0 })
    await store.append('newer', [
      { seq: 0, type: 'turn/start', time, data: { turn: 1 } },
      { seq: 1, type: 'turn/end', time, data: { turn: 1, reason: 'handed-off' } },
    ])
    await store.close('newer')
    const list = await rein(p.dir, ['sessions'])
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(/^newer +\S+ \S+ UTC +handed-off /m)
    expect(outline(list.stdout)).toEqual(['newer', 'known'])
  })

  it('masks a key in a first message, by its shape or as an environment secret\'s value, as the tool lines and rein config do', async () => {
    const p = await setUp([])
    const key = `sk-live-${'a1B2'.repeat(6)}`
    await stored(p, 'k1', 1, undefined, `use ${key} and hunter2hunter2 to deploy`)
    const list = await rein(p.dir, ['sessions'], { env: { DEPLOY_PASSWORD: 'hunter2hunter2' } })
    expect(list.code).toBe(0)
    expect(list.stdout).toContain('use *** and *** to deploy')
    expect(list.stdout).not.toContain('hunter2')
  })
})
