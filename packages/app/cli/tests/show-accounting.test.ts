// `rein show` against `rein sessions`: what the list charges a session must be findable in show,
// attempt by attempt, with a closing line that is the list's total.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
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

describe('costs in --json', () => {
  /** A turn of two attempts priced 0.1 and 0.2: summed as floating point, 0.30000000000000004. */
  function writeNoisySession(root: string, id: string) {
    mkdirSync(root, { recursive: true, mode: 0o700 })
    const route = { provider: 'mock', model: 'mock-model' }
    const attempt = (retry: number, cost: number) => ({ ...route, retry, fallback: 0, startedAt: 1, endedAt: 2, shown: retry > 0, usage: { inputTokens: 10, outputTokens: 2 }, cost, ...(retry === 0 ? { failure: { code: 'SERVER', message: 'boom', status: 500 } } : { finishReason: 'stop' }) })
    const data: [string, unknown][] = [
      ['turn/start', { turn: 1 }],
      ['user/message', { message: { id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } }],
      ['step/start', { turn: 1, step: 1 }],
      ['llm/attempt', attempt(0, 0.1)],
      ['llm/attempt', attempt(1, 0.2)],
      ['assistant/message', { message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'hello' }], source: { kind: 'model' } }, usage: { inputTokens: 10, outputTokens: 2 }, cost: 0.2, ...route }],
      ['step/end', { turn: 1, step: 1 }],
      ['turn/end', { turn: 1, reason: 'completed' }],
    ]
    const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: root, depth: 0 }
    const events = data.map(([type, event], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: event, ...(type === 'llm/attempt' ? { ignorable: true } : {}) }))
    writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
  }

  it('rein sessions --json and rein show --json print a cost without floating-point noise (0.1 + 0.2 is 0.3)', async () => {
    const p = await setUp([])
    const id = '11111111-2222-3333-4444-555555555555'
    writeNoisySession(join(p.home, 'sessions'), id)
    const env = { REIN_HOME: p.home }
    const listed = await rein(p.dir, ['sessions', '--json'], { env })
    expect(listed.stdout).not.toContain('0000000')
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ id, cost: 0.3 })
    const shown = await rein(p.dir, ['show', id, '--json'], { env })
    expect(shown.stdout).not.toContain('0000000')
    expect(JSON.parse(shown.stdout.trim().split('\n').at(-1)!)).toEqual({ type: 'totals', usage: { inputTokens: 20, outputTokens: 4 }, cost: 0.3 })
  })
})
