// `rein show` names a subagent's session under the call that started it in the words `rein
// sessions` lists it with: a child whose turn failed reads `failed`, never the log's `error`.
import type { MockReply, RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)

interface WireMessage { role: string; content?: string | null }
const lastMessage = (request: RecordedRequest) => ((request.body as { messages?: WireMessage[] }).messages ?? []).at(-1)

/** The parent delegates; the child's request is refused (HTTP 400, not retried), so its turn fails; the parent then answers. */
function failingChild(request: RecordedRequest): MockReply {
  const last = lastMessage(request)
  if (last?.content === 'child task') return { kind: 'error', status: 400, message: 'bad request for the child', type: 'invalid_request_error' }
  if (last?.role === 'tool') return { steps: [{ text: 'the child failed' }] }
  return { steps: [{ toolCall: { id: 'd1', name: 'delegate', arguments: JSON.stringify({ task: 'child task' }) } }] }
}

describe('rein show of a session whose subagent failed', () => {
  it('says the child session failed, as rein sessions lists it, not the log\'s word "error"', async () => {
    const p = await setUp(failingChild)
    const env = { REIN_HOME: p.home }
    const run = await spawnRein(p.dir, ['run', 'delegate it'], undefined, env)
    expect(run.code).toBe(0)
    const parent = /session (\S+)/.exec(run.stderr)![1]!
    const listed = await spawnRein(p.dir, ['sessions'], undefined, env)
    const child = listed.stdout.split('\n').find((line) => line.startsWith('  '))!
    expect(child).toMatch(/ failed /)
    const childId = child.trim().split(/\s+/)[0]!
    const shown = await spawnRein(p.dir, ['show', parent], undefined, env)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`    ↳ subagent session ${childId} · failed · 1 turn · rein show ${childId}\n`)
  }, 60_000)
})
