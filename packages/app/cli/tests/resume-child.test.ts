// `rein resume <a subagent's session>`: the child goes on as its profile made it — its system
// prompt, and no tool its requests were not offered — not as a new agent of the agents row.
import type { MockReply, RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const ROWS = [
  "- { id: jobs, name: '@rein/jobs' }",
  '- id: subagents',
  "  name: '@rein/subagents'",
  '  config:',
  '    profiles:',
  '      narrow: { description: looks at jobs only, system: NARROW-SYSTEM-PROMPT, tools: [job_list] }',
]

interface WireMessage { role: string; content?: string | null }
interface WireBody { messages?: WireMessage[]; tools?: { function: { name: string } }[] }
const body = (request: RecordedRequest) => request.body as WireBody
const lastMessage = (request: RecordedRequest) => (body(request).messages ?? []).at(-1)

function script(request: RecordedRequest): MockReply {
  const last = lastMessage(request)
  if (last?.role === 'user' && last.content === 'child task') return { steps: [{ text: 'child answer' }] }
  if (last?.role === 'user' && last.content === 'follow up') return { steps: [{ text: 'child again' }] }
  if (last?.role === 'tool') return { steps: [{ text: 'parent done' }] }
  return { steps: [{ toolCall: { id: 'd1', name: 'subagent', arguments: JSON.stringify({ description: 'narrow work', prompt: 'child task', agent: 'narrow' }) } }] }
}

describe('rein resume of a subagent\'s session', () => {
  it('keeps its profile\'s system prompt and the tools its requests were offered', async () => {
    const p = await setUp(script, { extraRows: ROWS })
    expect((await rein(p.dir, ['run', 'go'])).code).toBe(0)
    const sessions = await rein(p.dir, ['sessions', '--json'])
    const child = sessions.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; parentSessionId?: string }).find((summary) => summary.parentSessionId !== undefined)
    expect(child).toBeDefined()
    const resumed = await rein(p.dir, ['resume', child!.id, 'follow up'])
    expect(resumed.code).toBe(0)
    const [first, again] = p.server.requests.filter((request) => ['child task', 'follow up'].includes(lastMessage(request)?.content ?? ''))
    for (const request of [first, again]) {
      expect(body(request!).messages?.[0]).toMatchObject({ role: 'system', content: expect.stringContaining('NARROW-SYSTEM-PROMPT') })
      expect(body(request!).tools?.map((tool) => tool.function.name)).toEqual(['job_list'])
    }
  })
})
