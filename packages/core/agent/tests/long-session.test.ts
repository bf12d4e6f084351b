// A 500-step session whose tool outputs overflow a 32,000-token window many times over: without
// compaction the provider refuses a request part way; with it every step runs, and no request
// comes near the window.
import type { AdapterRequest } from '@rein/llm'
import type { ScriptedTurn } from '@rein/testkit'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { Agent } from '../src/index.ts'
import { boot } from './fixtures.ts'

const WINDOW = 32_000
const TURNS = 50
/** Nine tool calls and an answer per turn: 500 requests. */
const CALLS_PER_TURN = 9
const RESULT_CHARS = 4_000

/** The request's size as the provider would count it (4 characters a token, as the meter does). */
function sizeOf(request: AdapterRequest): number {
  const text = [request.system ?? '', JSON.stringify(request.tools ?? []), ...request.messages.flatMap((message) => message.content.map((block) => JSON.stringify(block)))].join('')
  return Math.ceil(text.length / 4)
}

/** A provider with a 32k window: refuses a bigger request; reports the input it read. */
function provider(sizes: number[]) {
  return (request: AdapterRequest): ScriptedTurn => {
    const size = sizeOf(request)
    sizes.push(size)
    if (size > WINDOW) return [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: `${size} tokens is more than the ${WINDOW} this model reads` } as never }]
    const usage = { usage: { inputTokens: size, outputTokens: 20 } }
    if (request.system?.startsWith('You write the summary')) return [{ text: '## Goal\nRead every file.\n## Decisions\nOne at a time.\n## Open tasks\nThe rest.\n## Notes\nNone.' }, usage]
    const sinceUser = request.messages.length - request.messages.findLastIndex((message) => message.source.kind === 'user')
    const calls = Math.floor(sinceUser / 2)
    if (calls >= CALLS_PER_TURN) return [{ text: 'read them all' }, usage]
    return [{ toolCall: { id: `c${request.messages.length}`, name: 'read_big', arguments: JSON.stringify({ path: `src/f${request.messages.length}.txt` }) } }, usage]
  }
}

async function run(mode: 'auto' | 'off') {
  const sizes: number[] = []
  const { root } = await boot(provider(sizes), { models: [{ id: 'm', contextWindow: WINDOW }], agent: { maxSteps: 20, compaction: { mode } as never } })
  root.tools.register(defineTool({
    name: 'read_big', description: 'Reads a big file.', parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['read'], isConcurrencySafe: true,
    execute: (args) => `${args.path}\n${'y'.repeat(RESULT_CHARS)}`,
  }))
  const agent: Agent = await root.agents.create()
  const reasons: string[] = []
  for (let turn = 1; turn <= TURNS; turn++) {
    const result = await agent.send(`read the next ${CALLS_PER_TURN} files (${turn})`)
    reasons.push(result.reason === 'error' ? `error ${result.error!.code}` : result.reason)
    if (result.reason !== 'completed') break
  }
  const steps = agent.session.events.filter((event) => event.type === 'step/start').length
  const compactions = agent.session.events.filter((event) => event.type === 'context/compacted').length
  return { sizes, reasons, steps, compactions }
}

describe('a 500-step session in a 32k window', () => {
  it('fails part way without compaction: the provider refuses the request', async () => {
    const off = await run('off')
    expect(off.reasons.at(-1)).toBe('error CONTEXT_WINDOW_EXCEEDED')
    expect(off.steps).toBeLessThan(TURNS * (CALLS_PER_TURN + 1))
  })

  it('runs every step with compaction, no request past the window', async () => {
    const auto = await run('auto')
    expect(auto.reasons).toEqual(Array.from({ length: TURNS }, () => 'completed'))
    expect(auto.steps).toBe(TURNS * (CALLS_PER_TURN + 1))
    expect(Math.max(...auto.sizes)).toBeLessThanOrEqual(WINDOW)
    expect(auto.compactions).toBeGreaterThan(0)
  }, 60_000)
})
