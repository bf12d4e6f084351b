// A subagent's progress is live: its tool calls show under the call that started it, indented
// one step per level, while its text stays its own (the call's result).
import type { MockReply, RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, sessionIdOf } from './harness.ts'

const setUp = projectPerTest(afterEach)

interface WireMessage { role: string; content?: string | null }
const lastMessage = (request: RecordedRequest) => ((request.body as { messages?: WireMessage[] }).messages ?? []).at(-1)
const call = (id: string, name: string, args: object): MockReply => ({ steps: [{ toolCall: { id, name, arguments: JSON.stringify(args) } }] })

/** main delegates "level 1", which delegates "level 2", which looks a word up; each answers after its tool. */
function nested(request: RecordedRequest): MockReply {
  const last = lastMessage(request)
  if (last?.role === 'tool') return { steps: [{ text: `answered after ${last.content}` }] }
  if (last?.content === 'level 2') return call('l2', 'lookup', { word: 'deep' })
  if (last?.content === 'level 1') return call('l1', 'delegate', { task: 'level 2' })
  return call('l0', 'delegate', { task: 'level 1' })
}

describe('a subagent\'s progress', () => {
  it('shows its tool calls under the call that started it, one indent per level, and not its text', async () => {
    const p = await setUp(nested)
    const run = await rein(p.dir, ['run', 'go deep'])
    expect(run.code).toBe(0)
    const lines = run.stderr.split('\n').filter((line) => line.includes('[tool]'))
    expect(lines).toEqual([
      '  [tool] delegate {"task":"level 1"} …',
      '    [tool] delegate {"task":"level 2"} …',
      '      [tool] lookup {"word":"deep"} ok',
      '    [tool] delegate {"task":"level 2"} ok',
      '  [tool] delegate {"task":"level 1"} ok',
    ])
    expect(run.stdout).toBe('answered after answered after answered after deep: a word\n')
    // rein show names the session each delegating call started, under the call.
    const shown = await rein(p.dir, ['show', sessionIdOf(run)])
    expect(shown.stdout).toMatch(/ {2}→ delegate \{"task":"level 1"\}\n {4}↳ subagent session (\S+) · completed · 1 turn · rein show \1\n/)
    const json = await rein(p.dir, ['run', '--json', 'go deep'])
    const events = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; event?: { type: string; event?: { type: string } } })
    expect(events.some((event) => event.type === 'subagent' && event.event?.type === 'subagent' && event.event.event?.type === 'tool-end')).toBe(true)
  })
})
