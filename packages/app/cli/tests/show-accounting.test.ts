// `rein show` against `rein sessions`: what the list charges a session must be findable in show,
// attempt by attempt, with a closing line that is the list's total.
import { groupDigits } from '@rein/base'
import type { RecordedRequest, MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, sessionIdOf } from './harness.ts'

const setUp = projectPerTest(afterEach)

type Wire = { messages: { role: string; content?: string | null }[] }
const isSummaryRequest = (request: RecordedRequest) => String((request.body as Wire).messages[0]?.content ?? '').startsWith('You write the summary')
const usageChunk = (prompt: number, completion: number) => ({ event: { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'mock-model', choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion } } })

/**
 * Turn 1: an attempt the server reports 1,000 + 7 tokens for and then drops, a retry whose usage
 * the server leaves out (estimated), then an answer. Turn 2: a tool call and an answer. A summary
 * request (`rein compact`) reports 300 + 30.
 */
function script(request: RecordedRequest, index: number): MockReply {
  if (isSummaryRequest(request)) return { steps: [{ text: '## Goal\nRead the files.\n## Decisions\nNone.\n## Open tasks\nNone.\n## Notes\nNone.' }], usage: { prompt_tokens: 300, completion_tokens: 30 } }
  if (index === 0) return { steps: [{ reasoning: 'thinking' }, usageChunk(1_000, 7), { disconnect: true }] }
  if (index === 1) return { steps: [{ toolCall: { id: 'c1', name: 'dump', arguments: '{"path":"a.txt"}' } }], usage: null }
  const last = (request.body as Wire).messages.at(-1)!
  if (last.role === 'tool') return { steps: [{ text: 'done' }], usage: { prompt_tokens: 900, completion_tokens: 5 } }
  return { steps: [{ toolCall: { id: `c${index}`, name: 'dump', arguments: '{"path":"b.txt"}' } }], usage: { prompt_tokens: 800, completion_tokens: 9 } }
}

/** Every `in N out M` on the lines given, summed: what a person adding up show's figures gets. */
function added(lines: readonly string[]): { input: number; output: number } {
  let input = 0
  let output = 0
  for (const line of lines) {
    for (const match of line.matchAll(/in ([\d,]+)(?: \(cached [\d,]+\))? out ([\d,]+)/g)) {
      input += Number(match[1]!.replaceAll(',', ''))
      output += Number(match[2]!.replaceAll(',', ''))
    }
  }
  return { input, output }
}

describe('rein show accounts for what rein sessions charges', () => {
  it('shows failed, estimated and summary attempts with their tokens, and ends with the total sessions lists', async () => {
    const p = await setUp(script, { pricing: true, contextWindow: 4_000 })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    expect((await rein(p.dir, ['run', '--session', id, 'task 2'], { env })).code).toBe(0)
    expect((await rein(p.dir, ['compact', id], { env })).code).toBe(0)

    const [listed] = (await rein(p.dir, ['sessions', '--json'], { env })).stdout.trim().split('\n').map((line) => JSON.parse(line) as { usage: { inputTokens: number; outputTokens: number }; cost: number })
    const row = /(~?[\d,]+) tok +(\S+)/.exec((await rein(p.dir, ['sessions'], { env })).stdout)!
    const shown = await rein(p.dir, ['show', id], { env })
    expect(shown.code).toBe(0)
    const lines = shown.stdout.trimEnd().split('\n')

    expect(lines.some((line) => /failed/.test(line) && line.includes('STREAM_CLOSED') && line.includes('in 1,000 out 7'))).toBe(true)
    expect(lines.some((line) => /estimated/.test(line) && line.includes('→ dump') === false && /in [\d,]+ out [\d,]+/.test(line))).toBe(true)
    expect(lines.some((line) => /summary/.test(line) && line.includes('in 300 out 30'))).toBe(true)
    // The figures above the last line add up to the session's usage, and the last line is the list's.
    expect(added(lines.slice(0, -1))).toEqual({ input: listed!.usage.inputTokens, output: listed!.usage.outputTokens })
    const total = lines.at(-1)!
    expect(total).toContain(`${row[1]} tok`)
    expect(total).toContain(`in ${groupDigits(listed!.usage.inputTokens)} out ${groupDigits(listed!.usage.outputTokens)}`)
    expect(total).toContain(`cost ${row[2]}`)
  })

  it('ends --json with a totals line equal to the session rein sessions --json lists', async () => {
    const p = await setUp(script, { pricing: true, contextWindow: 4_000 })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    const [listed] = (await rein(p.dir, ['sessions', '--json'], { env })).stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const shown = (await rein(p.dir, ['show', id, '--json'], { env })).stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(shown[0]).toMatchObject({ type: 'header', id })
    expect(shown.at(-1)).toEqual({ type: 'totals', usage: listed!.usage, cost: listed!.cost, usageEstimated: true })
  })
})
