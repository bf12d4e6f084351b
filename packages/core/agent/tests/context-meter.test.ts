// The `context` event's figure between steps. A user saw `{"type":"context","tokens":80}` right after
// a step whose provider reported 3 238 input tokens: the meter threw the provider's figure away and
// counted characters whenever anything but the messages differed from the request it described (an
// unpinned section rendering anew, a tool registered meanwhile, a fallback answering, an answer
// without usage). A provider whose tokenizer reads far more tokens than 4 characters each then saw
// the figure collapse to a fraction of what it had just reported.
import type { Context } from '@deepseek-ai/cordis'
import { createMessage, type LlmFailure } from '@rein/llm'
import { MessageProjection, type SessionEvent } from '@rein/session'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../src/index.ts'
import { loggedReport } from '../src/compaction/meter.ts'
import { boot } from './fixtures.ts'

const REPORTED = 3_238
const usage = { inputTokens: REPORTED, outputTokens: 20 }
/** Step 1 asks for a tool and reports usage; step 2 answers. */
const twoSteps = [
  [{ toolCall: { id: 'c1', name: 'note', arguments: '{}' } }, { usage }],
  [{ text: 'done' }, { usage: { inputTokens: REPORTED + 40, outputTokens: 5 } }],
] as const

/** The `context` figures the agent told, in order. */
function contextFigures(events: readonly AgentEvent[]): number[] {
  return events.flatMap((event) => (event.type === 'context' ? [event.tokens] : []))
}

function noteTool(root: Context, onRun: () => void = () => {}) {
  root.tools.register(defineTool({
    name: 'note',
    description: 'Notes.',
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: () => { onRun(); return 'noted' },
  }))
}

async function run(root: Context): Promise<number[]> {
  const agent = await root.agents.create({ system: 'You are rein.' })
  const events: AgentEvent[] = []
  agent.subscribe((event) => { events.push(event) })
  expect(await agent.send('go')).toMatchObject({ reason: 'completed' })
  return contextFigures(events)
}

describe('the context figure after a step the provider reported', () => {
  it('does not collapse to a character count when an unpinned section renders a different text next step', async () => {
    const { root } = await boot(twoSteps as never)
    noteTool(root)
    let step = 0
    root.agents.section({ id: 'clock', order: 10, render: () => `Step ${++step} of the turn.` })
    const figures = await run(root)
    expect(figures).toHaveLength(2)
    expect(figures[1]).toBeGreaterThanOrEqual(REPORTED)
  })

  it('does not collapse when a tool is registered between steps', async () => {
    const { root } = await boot(twoSteps as never)
    noteTool(root, () => {
      root.tools.register(defineTool({ name: 'late', description: 'Offered lazily, once a note exists.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => 'late' }))
    })
    const figures = await run(root)
    expect(figures[1]).toBeGreaterThanOrEqual(REPORTED)
  })

  it('counts what the new tool adds on top of the reported figure, not a fresh count of the request', async () => {
    const { root } = await boot(twoSteps as never)
    const description = 'x'.repeat(4_000)
    noteTool(root, () => {
      root.tools.register(defineTool({ name: 'late', description, parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => 'late' }))
    })
    const figures = await run(root)
    // About a thousand tokens of description more than what the provider reported, plus the call and its result.
    expect(figures[1]).toBeGreaterThanOrEqual(REPORTED + 1_000)
    expect(figures[1]).toBeLessThan(REPORTED + 1_100)
  })

  it('does not collapse when a fallback answered the step', async () => {
    const down: LlmFailure = { code: 'SERVER', message: 'down' }
    let calls = 0
    const { root } = await boot((request: { model: string }) => {
      calls++
      if (request.model === 'm' && calls === 1) return { steps: [], finish: 'error' as const, failure: down }
      return calls === 2 ? [...twoSteps[0]] : [...twoSteps[1]]
    }, { agent: { fallbacks: [{ provider: 'scripted', model: 'backup' }] }, llm: { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } } })
    noteTool(root)
    const figures = await run(root)
    expect(figures[1]).toBeGreaterThanOrEqual(REPORTED)
  })

  it('keeps the last report when a later step\'s provider reported no usage', async () => {
    const { root } = await boot([
      [{ toolCall: { id: 'c1', name: 'note', arguments: '{}' } }, { usage }],
      [{ toolCall: { id: 'c2', name: 'note', arguments: '{}' } }],
      [{ text: 'done' }],
    ])
    noteTool(root)
    const figures = await run(root)
    expect(figures).toHaveLength(3)
    expect(figures[2]).toBeGreaterThanOrEqual(figures[1]!)
    expect(figures[2]).toBeGreaterThanOrEqual(REPORTED)
  })

  it('still follows the provider when only messages were appended', async () => {
    const { root } = await boot(twoSteps as never)
    noteTool(root)
    const figures = await run(root)
    // The reported input plus the call and its result: a few tokens.
    expect(figures[1]).toBeGreaterThan(REPORTED)
    expect(figures[1]).toBeLessThan(REPORTED + 40)
  })

  it('drops when the system text shrinks, by what it lost', async () => {
    const { root } = await boot(twoSteps as never)
    noteTool(root)
    let first = true
    root.agents.section({ id: 'once', order: 10, render: () => (first ? (first = false, 'y'.repeat(2_000)) : undefined) })
    const figures = await run(root)
    // 500 tokens of system text gone, a few of messages added.
    expect(figures[1]).toBeLessThan(REPORTED - 450)
    expect(figures[1]).toBeGreaterThan(REPORTED - 500)
  })

  it('counts what a longer system text and a new tool add to the logged report when the session is resumed with them', async () => {
    const { root } = await boot([
      [{ text: 'first answer' }, { usage }],
      [{ text: 'second answer' }, { usage }],
    ])
    const first = await root.agents.create({ system: 'You are rein.' })
    expect(await first.send('go')).toMatchObject({ reason: 'completed' })
    await first.close()
    noteTool(root)
    const { agent } = await root.agents.resume(first.session.id, { system: `You are rein. ${'w'.repeat(4_000)}` })
    const events: AgentEvent[] = []
    agent.subscribe((event) => { events.push(event) })
    expect(await agent.send('again')).toMatchObject({ reason: 'completed' })
    // A thousand tokens of system text and the note tool's schema more than the log's request.
    const [figure] = contextFigures(events)
    expect(figure).toBeGreaterThan(REPORTED + 1_000)
    expect(figure).toBeLessThan(REPORTED + 1_100)
  })

  it('takes no report from a provider that says it read no input tokens, in this process or from the log', async () => {
    const none = { inputTokens: 0, outputTokens: 3 }
    const { root } = await boot([
      [{ toolCall: { id: 'c1', name: 'note', arguments: '{}' } }, { usage: none }],
      [{ text: 'done' }, { usage: none }],
      [{ text: 'again' }, { usage: none }],
    ])
    noteTool(root)
    const system = 'z'.repeat(4_000)
    const first = await root.agents.create({ system })
    const events: AgentEvent[] = []
    first.subscribe((event) => { events.push(event) })
    expect(await first.send('go')).toMatchObject({ reason: 'completed' })
    // A thousand tokens of system text: counted, not taken away by a report of nothing.
    expect(contextFigures(events)[1]).toBeGreaterThan(1_000)
    await first.close()
    const { agent } = await root.agents.resume(first.session.id, { system })
    const resumed: AgentEvent[] = []
    agent.subscribe((event) => { resumed.push(event) })
    expect(await agent.send('again')).toMatchObject({ reason: 'completed' })
    expect(contextFigures(resumed)[0]).toBeGreaterThan(1_000)
  })

  it('starts a resumed session from the input its log last reported, not from a count of its characters', async () => {
    const { root } = await boot([
      [{ text: 'first answer' }, { usage }],
      [{ text: 'second answer' }, { usage: { inputTokens: REPORTED + 10, outputTokens: 5 } }],
    ])
    const first = await root.agents.create({ system: 'You are rein.' })
    expect(await first.send('go')).toMatchObject({ reason: 'completed' })
    await first.close()
    const { agent } = await root.agents.resume(first.session.id, { system: 'You are rein.' })
    const events: AgentEvent[] = []
    agent.subscribe((event) => { events.push(event) })
    expect(await agent.send('again')).toMatchObject({ reason: 'completed' })
    // The reported input, plus the answer and the new message: a few tokens more.
    const [figure] = contextFigures(events)
    expect(figure).toBeGreaterThan(REPORTED)
    expect(figure).toBeLessThan(REPORTED + 40)
  })
})

/** What `loggedReport` reads of a session, for a log built by hand. */
function logged(events: SessionEvent[]) {
  const projection = new MessageProjection()
  for (const event of events) projection.push(event)
  return loggedReport({ events, messageEntries: () => projection.entries() })
}

describe('the report a log ends with', () => {
  let seq = 0
  const event = (type: string, data: unknown): SessionEvent => ({ seq: seq++, type, time: '2026-12-06T00:00:00.000Z', data }) as SessionEvent
  const said = (role: 'user' | 'assistant', text: string) => createMessage(role, [{ type: 'text', text }], role === 'user' ? { kind: 'user' } : { kind: 'model', provider: 'p', model: 'm' })
  const answer = (text: string, withUsage?: { inputTokens: number; outputTokens: number }) =>
    event('assistant/message', { message: said('assistant', text), provider: 'p', model: 'm', ...(withUsage ? { usage: withUsage } : {}) })

  it('is the last answer with usage, with the messages its request carried; an answer without usage after it leaves it', () => {
    const events = [event('user/message', { message: said('user', 'one') }), answer('a', usage), event('user/message', { message: said('user', 'two') }), answer('b')]
    expect(logged(events)).toEqual({ input: REPORTED, messages: 1 })
  })

  it('is none after a compaction, which rewrote the messages the report describes, nor in a log without usage', () => {
    const compacted = event('context/compacted', { reason: 'auto', tokensBefore: 10, tokensAfter: 5, pruned: [] })
    expect(logged([event('user/message', { message: said('user', 'one') }), answer('a', usage), compacted])).toBeUndefined()
    expect(logged([event('user/message', { message: said('user', 'one') }), answer('a')])).toBeUndefined()
    expect(logged([])).toBeUndefined()
  })
})
