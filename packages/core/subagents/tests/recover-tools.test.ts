// A child continued after a crash keeps the tools its requests were offered: the parent's
// allow-list (not live while the parent's log is repaired) is read from the child's own log.
import type { AgentService } from '@rein/agent'
import type { SessionEvent, SessionService, SessionSummary } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { recoverChild } from '../src/recover.ts'

const header = (seq: number, tools?: { name: string }[]): SessionEvent => ({
  seq, time: '2026-12-01T00:00:00.000Z', type: 'request/header',
  data: { provider: 'scripted', model: 'm', systemHash: 'h', toolsHash: `t${seq}`, ...(tools ? { tools } : {}) },
} as SessionEvent)

function deps(events: SessionEvent[]) {
  const summary = { id: 'child', status: 'needs-repair', parentCallId: 'c1', parentSessionId: 'parent' } as SessionSummary
  const resumed: unknown[] = []
  const sessions = { list: async () => [summary], load: async () => ({ header: {}, events }) } as unknown as SessionService
  const agents = {
    resume: async (_id: string, options: unknown) => {
      resumed.push(options)
      throw new Error('stop here: only the options are under test')
    },
  } as unknown as AgentService
  const tools = { list: () => ['lookup', 'save', 'subagent'] } as unknown as ToolRegistry
  return { resumed, deps: { config: { maxDepth: 3, timeoutMs: 60_000, maxBackground: 4, profiles: {} }, tools: () => tools, sessions: () => sessions, agents: () => agents, running: new Set<never>() } }
}

describe('recovering an interrupted child', () => {
  it('gives every tool to a child interrupted before its first request when it continues it instead of calling it not started', async () => {
    // Nothing in its log says what its parent allowed; it has done no work either.
    const { resumed, deps: recoverDeps } = deps([])
    const found = await recoverChild(recoverDeps, { callId: 'c1', args: { prompt: 'task' } }, { sessionId: 'parent', signal: new AbortController().signal })
    expect(found).toMatchObject({ error: { code: 'TOOL_NOT_STARTED' } })
    expect((found as { error: Error }).error.message).toContain('subagent session child')
    expect(resumed).toEqual([])
  })

  it('offers it only the tools its last request was offered, never more than its parent allowed', async () => {
    const { resumed, deps: recoverDeps } = deps([header(0, [{ name: 'lookup' }, { name: 'save' }]), header(1), header(2, [{ name: 'lookup' }])])
    await expect(recoverChild(recoverDeps, { callId: 'c1', args: { prompt: 'task' } }, { sessionId: 'parent', signal: new AbortController().signal })).resolves.toMatchObject({ error: { code: 'SUBAGENT_INTERRUPTED' } })
    expect(resumed).toMatchObject([{ tools: ['lookup'] }])
  })

  it('narrows by the call\'s tools too, and offers none when its requests were offered none', async () => {
    const narrowed = deps([header(0, [{ name: 'lookup' }, { name: 'save' }])])
    await expect(recoverChild(narrowed.deps, { callId: 'c1', args: { prompt: 'task', tools: ['save', 'subagent'] } }, { sessionId: 'parent', signal: new AbortController().signal })).resolves.toMatchObject({ error: { code: 'SUBAGENT_INTERRUPTED' } })
    expect(narrowed.resumed).toMatchObject([{ tools: ['save'] }])
    const none = deps([header(0, [])])
    await expect(recoverChild(none.deps, { callId: 'c1', args: { prompt: 'task' } }, { sessionId: 'parent', signal: new AbortController().signal })).resolves.toMatchObject({ error: { code: 'SUBAGENT_INTERRUPTED' } })
    expect(none.resumed).toMatchObject([{ tools: [] }])
  })
})
