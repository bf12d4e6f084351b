// Context compaction: the meter before each request, pruning old tool results to stubs, a summary
// when that is not enough, and the log that rebuilds exactly what the model saw.
import { Logger, type Context, type Exporter } from '@deepseek-ai/cordis'
import type { AdapterRequest, LlmAdapter, Message } from '@rein/llm'
import { deriveMessages, eventData, MemorySessionStore, type ContextCompacted, type SessionEvent } from '@rein/session'
import type { ScriptedStep, ScriptedTurn } from '@rein/testkit'
import { defineTool } from '@rein/tools'
import { describe, expect, it, vi } from 'vitest'
import type { Agent, AgentConfigInput, AgentEvent, LifecycleEvents, TurnResult } from '../src/index.ts'
import { boot, dumpTool } from './fixtures.ts'

const WINDOW = 4_000
const COMPACTION = { reserveTokens: 500, summaryMaxTokens: 256 }
const SUMMARY = '## Goal\nKeep going.\n## Decisions\nUse dump.\n## Open tasks\nMore.\n## Notes\nNone.'

const isSummaryRequest = (request: AdapterRequest) => request.system?.startsWith('You write the summary') === true
const textOf = (message: Message) => message.content.map((block) => (block.type === 'text' ? block.text : block.type === 'tool-result' ? block.content.map((part) => (part.type === 'text' ? part.text : '')).join('') : '')).join('')
const compactions = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'context/compacted').map((event) => eventData(event, 'context/compacted'))

/** Each turn: one `dump` call (a 2,000-character result), then a short answer. */
function dumping(request: AdapterRequest): ScriptedTurn {
  const last = request.messages.at(-1)!
  return last.source.kind === 'tool' ? [{ text: 'done' }] : [{ toolCall: { id: `d${request.messages.length}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }]
}

/** A summary route that never answers until it is stopped. */
function silentAdapter(): LlmAdapter {
  return {
    stream: (request) => (async function* () {
      await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }))
      yield* []
    })(),
  } as LlmAdapter
}

const LIFECYCLE: (keyof LifecycleEvents)[] = ['agent/turn-start', 'agent/turn-end', 'agent/llm-start', 'agent/llm-end', 'agent/compaction-start', 'agent/compaction-end']

/** Every lifecycle event a compaction could send, as heard from now on. */
function listen(root: Context) {
  const heard: { name: keyof LifecycleEvents; event: LifecycleEvents[keyof LifecycleEvents] }[] = []
  for (const name of LIFECYCLE) root.on(name, (event: never) => { heard.push({ name, event }) })
  return heard
}

/** `answer` for the agent's requests; summary requests get `summary()`, SUMMARY by default. */
function script(answer: (request: AdapterRequest) => ScriptedTurn, summary: (request: AdapterRequest) => ScriptedTurn = () => [{ text: SUMMARY }]) {
  return (request: AdapterRequest): ScriptedTurn => (isSummaryRequest(request) ? summary(request) : answer(request))
}

interface SetUp {
  answer?: (request: AdapterRequest) => ScriptedTurn
  summary?: (request: AdapterRequest) => ScriptedTurn
  compaction?: Record<string, unknown>
  /** Other agent options (budgets). */
  agent?: AgentConfigInput
  window?: number | undefined
  store?: MemorySessionStore
}

async function setUp(options: SetUp = {}) {
  const models = options.window === undefined && 'window' in options ? [{ id: 'm' }] : [{ id: 'm', contextWindow: options.window ?? WINDOW }]
  const stack = await boot(script(options.answer ?? dumping, options.summary), { models, agent: { ...options.agent, compaction: { ...COMPACTION, ...options.compaction } as never }, ...(options.store ? { store: options.store } : {}) })
  stack.root.tools.register(dumpTool())
  return stack
}

describe('pruning', () => {
  it('prunes old tool results to stubs before the window fills, keeping the last turns and the log whole', async () => {
    const { root, llm } = await setUp()
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first).toMatchObject({ reason: 'auto' })
    expect(first!.pruned.length).toBeGreaterThan(0)
    expect(first!.tokensAfter).toBeLessThan(first!.tokensBefore)
    // The next request reads stubs for the pruned results; the log keeps every result whole.
    const after = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!
    const stubbed = after.messages.filter((message) => message.source.kind === 'tool' && textOf(message).includes('result pruned to save context'))
    expect(stubbed.length).toBeGreaterThan(0)
    expect(textOf(stubbed[0]!)).toContain(`recall_result {"call_id": "${first!.pruned[0]!.callId}"}`)
    expect(agent.session.events.filter((event) => event.type === 'tool/result').every((event) => textOf({ content: [{ type: 'tool-result', toolCallId: '', content: eventData(event, 'tool/result').content }] } as never).length === 2_000)).toBe(true)
    // The last turns' results are whole, and no summary was needed.
    expect(textOf(after.messages.at(-1)!)).toHaveLength(2_000)
    expect(llm.requests.some(isSummaryRequest)).toBe(false)
  })

  it('prunes the long arguments of old calls as it prunes old results, keeping the recent calls whole', async () => {
    // Each turn writes 2,000 characters through a call's arguments, not its result.
    const writing = (request: AdapterRequest): ScriptedTurn => request.messages.at(-1)!.source.kind === 'tool'
      ? [{ text: 'done' }]
      : [{ toolCall: { id: `w${request.messages.length}`, name: 'nope', arguments: JSON.stringify({ path: 'notes.txt', text: 'w'.repeat(2_000) }) } }]
    const { root, llm } = await setUp({ answer: writing })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const pruned = compactions(agent.session.events).flatMap((data) => data.prunedArguments ?? [])
    expect(pruned.length).toBeGreaterThan(0)
    const calls = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!.messages.flatMap((message) => message.content.filter((block) => block.type === 'tool-call'))
    const stubbed = calls.filter((call) => call.arguments.includes('characters left out to save context'))
    // The last turn's call is read whole; every call the model reads stubbed was pruned by a compaction.
    expect(stubbed.length).toBeGreaterThan(0)
    expect(calls.at(-1)!.arguments).toContain('w'.repeat(2_000))
    expect(stubbed.map((call) => call.id).every((id) => pruned.some((entry) => entry.callId === id))).toBe(true)
  })

  it('derives the same messages from the stored log as the live session shows (a resume sees what the model saw)', async () => {
    const store = new MemorySessionStore()
    const { root } = await setUp({ store })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) await agent.send(`task ${turn}`)
    expect(compactions(agent.session.events).length).toBeGreaterThan(0)
    const live = agent.session.messages()
    await agent.close()
    expect(deriveMessages((await root.sessions.load(agent.session.id)).events)).toEqual(live)
  })
})

describe('recall_result', () => {
  it.each([
    ['an agent with every tool', undefined],
    ['an agent with an allow-list that does not name it (a subagent profile)', ['dump']],
  ])('is offered only once something was pruned, and gives the pruned result back whole, to %s', async (_case, tools) => {
    const recall: { id?: string } = {}
    const { root, llm } = await setUp({
      answer: (request) => {
        const last = request.messages.at(-1)!
        if (recall.id && textOf(last).startsWith('recall ')) return [{ toolCall: { id: 'r1', name: 'recall_result', arguments: JSON.stringify({ call_id: recall.id }) } }]
        return dumping(request)
      },
    })
    const agent = await root.agents.create(tools ? { tools } : {})
    for (let turn = 1; turn <= 8; turn++) await agent.send(`task ${turn}`)
    const [first] = compactions(agent.session.events)
    recall.id = first!.pruned[0]!.callId
    const offered = (request: AdapterRequest) => request.tools?.some((tool) => tool.name === 'recall_result') === true
    expect(offered(llm.requests[0]!)).toBe(false)
    // The first request that shows a stub already offers the tool the stub names.
    const firstStubbed = llm.requests.find((request) => request.messages.some((message) => textOf(message).includes('result pruned to save context')))!
    expect(offered(firstStubbed)).toBe(true)
    await agent.send('recall it')
    const recalled = agent.session.events.findLast((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === 'r1')!
    expect(eventData(recalled, 'tool/result')).toMatchObject({ isError: false, content: [{ type: 'text', text: 'x'.repeat(2_000) }] })
    expect(offered(llm.requests.at(-1)!)).toBe(true)
  })
})

describe('a result too big to keep whole in the window', () => {
  /**
   * `huge`: 8,000 characters by default, as many tokens as the whole window; the model recalls every
   * stub it gets, as the stub tells it to, and `more` says what it does with a recalled result.
   */
  async function recalling(recall: (id: string, request: AdapterRequest) => string, size = 8_000, more: (text: string, request: AdapterRequest) => ScriptedTurn | undefined = () => undefined) {
    const stack = await setUp({
      window: 2_000,
      answer: (request) => {
        const last = request.messages.at(-1)!
        const stub = /recall_result \{"call_id": "([^"]+)"\}/.exec(textOf(last))?.[1]
        if (last.source.kind === 'tool' && stub) return [{ toolCall: { id: `r${request.messages.length}`, name: 'recall_result', arguments: recall(stub, request) } }]
        if (last.source.kind === 'tool') return more(textOf(last), request) ?? [{ text: 'done' }]
        return [{ toolCall: { id: 'h1', name: 'huge', arguments: '{}' } }]
      },
    })
    stack.root.tools.register(defineTool({ name: 'huge', description: 'Reads a huge file.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['read'], execute: () => 'y'.repeat(size) }))
    return { ...stack, agent: await stack.root.agents.create() }
  }
  const recallsIn = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'tool/call' && eventData(event, 'tool/call').name === 'recall_result')

  it('is not recalled whole again and again until the turn runs out of steps: a recall pruned once is refused, saying how to read a part', async () => {
    // 5,900 characters: under what the window allows alone, so shown whole once, but not with the rest of the request.
    const { agent } = await recalling((id) => JSON.stringify({ call_id: id }), 5_900)
    const result = await agent.send('read the huge file')
    expect(result).toMatchObject({ reason: 'completed' })
    expect(recallsIn(agent.session.events).length).toBeLessThanOrEqual(2)
    const refused = agent.session.events.findLast((event) => event.type === 'tool/result' && eventData(event, 'tool/result').isError === true)
    expect(eventData(refused!, 'tool/result')).toMatchObject({ code: 'RESULT_TOO_BIG', content: [{ type: 'text', text: expect.stringMatching(/h1.*5900 characters.*offset.*max_chars/s) }] })
  })

  it('is shown in a part that fits at its first recall, saying how to read the rest, instead of whole and pruned again (a step spent for nothing)', async () => {
    // The model recalls the stub, then reads on from where each part says it stopped, with the size it says fits.
    const header = /^\[characters (\d+)–(\d+) of the (\d+) of h1's result/
    const { agent, llm } = await recalling((id) => JSON.stringify({ call_id: id }), 8_000, (text, request) => {
      const [, from, to, total] = header.exec(text)?.map(Number) ?? []
      if (to === undefined || to >= total!) return undefined
      return [{ toolCall: { id: `p${request.messages.length}`, name: 'recall_result', arguments: JSON.stringify({ call_id: 'h1', offset: to, max_chars: to - from! }) } }]
    })
    expect(await agent.send('read the huge file')).toMatchObject({ reason: 'completed' })
    const results = agent.session.events.filter((event) => event.type === 'tool/result' && /^[rp]/.test(eventData(event, 'tool/result').callId)).map((event) => eventData(event, 'tool/result'))
    // The first recall, asked for the whole result, already gives a part and says how to read on.
    const first = textOf({ content: [{ type: 'tool-result', toolCallId: '', content: results[0]!.content }] } as never)
    expect(results[0]).toMatchObject({ isError: false })
    expect(first).toMatch(/^\[characters 0–(\d+) of the 8000 of h1's result; too big to show whole.*\{"call_id": "h1", "offset": \1, "max_chars": \d+\}/s)
    // Every recall was a part that fits: none refused, each read whole by the model (not pruned to a
    // stub it would recall again), the parts together the whole result, which is never sent again.
    expect(results.every((result) => result.isError === false)).toBe(true)
    expect(results.filter((result) => result.callId.startsWith('r'))).toHaveLength(1)
    const texts = results.map((result) => textOf({ content: [{ type: 'tool-result', toolCallId: '', content: result.content }] } as never))
    for (const text of texts) expect(llm.requests.some((request) => textOf(request.messages.at(-1)!) === text)).toBe(true)
    expect(texts.reduce((sum, text) => sum + text.split('\n')[1]!.length, 0)).toBe(8_000)
    const afterFirst = llm.requests.slice(llm.requests.findIndex((request) => request.messages.some((message) => textOf(message).includes('of h1\'s result'))))
    expect(afterFirst.some((request) => request.messages.some((message) => textOf(message).includes('y'.repeat(8_000))))).toBe(false)
  })

  it('gives a part of it back with offset and max_chars, which the window can hold', async () => {
    const { agent } = await recalling((id) => JSON.stringify({ call_id: id, offset: 7_000, max_chars: 1_000 }))
    expect(await agent.send('read the huge file')).toMatchObject({ reason: 'completed' })
    const part = agent.session.events.find((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId.startsWith('r'))!
    expect(textOf({ content: [{ type: 'tool-result', toolCallId: '', content: eventData(part, 'tool/result').content }] } as never)).toBe(`[characters 7000–8000 of the 8000 of h1's result]\n${'y'.repeat(1_000)}`)
    expect(agent.session.messages().at(-2)!.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'tool-result', content: [{ type: 'text', text: expect.stringContaining('y'.repeat(1_000)) }] })]))
  })
})

describe('a recalled result the context keeps whole', () => {
  /**
   * Turn 1: the model reads a `size`-character file (`h1`); turn 2 is a short exchange; then a
   * compaction between turns, and turn 3 recalls `h1`. Resolves with what the recall showed.
   */
  async function recalled(options: { window: number; size: number; compaction: Record<string, unknown> }): Promise<string> {
    const stack = await setUp({
      window: options.window,
      compaction: options.compaction,
      answer: (request) => {
        const last = request.messages.at(-1)!
        if (last.source.kind === 'tool') return [{ text: 'done' }]
        if (textOf(last) === 'read') return [{ toolCall: { id: 'h1', name: 'huge', arguments: '{}' } }]
        if (textOf(last) === 'recall') return [{ toolCall: { id: 'r1', name: 'recall_result', arguments: JSON.stringify({ call_id: 'h1' }) } }]
        return [{ text: 'ok' }]
      },
    })
    stack.root.tools.register(defineTool({ name: 'huge', description: 'Reads a huge file.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['read'], execute: () => 'y'.repeat(options.size) }))
    const agent = await stack.root.agents.create()
    await agent.send('read')
    await agent.send('hello')
    await agent.compactNow()
    await agent.send('recall')
    const result = agent.session.events.find((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === 'r1')
    expect(result && eventData(result, 'tool/result').isError).toBe(false)
    return textOf({ content: [{ type: 'tool-result', toolCallId: '', content: eventData(result!, 'tool/result').content }] } as never)
  }

  it('is shown whole in manual mode, where no threshold prunes it again, not in parts as if it would be', async () => {
    // 6,400 characters: past the threshold of a 2,000-token window, which manual mode never acts on.
    const text = await recalled({ window: 2_000, size: 6_400, compaction: { mode: 'manual' } })
    expect(text.slice(0, 20)).toBe('y'.repeat(20))
    expect(text).toHaveLength(6_400)
  })

  it('is shown in a part with a low threshold, one smaller than the whole result, not whole under a header that says it is too big', async () => {
    // threshold 0.1 of 20,000 tokens: 2,000, below the 5,000 a compaction keeps of the latest tool
    // output. The 12,000-character result (about 3,000 tokens) is past the one, within the other.
    const text = await recalled({ window: 20_000, size: 12_000, compaction: { threshold: 0.1, target: 0.05, keepTurns: 1 } })
    const [, to, total, offset] = /^\[characters 0–(\d+) of the (\d+) of h1's result; too big to show whole.*"offset": (\d+)/.exec(text)?.map(Number) ?? []
    expect(total).toBe(12_000)
    expect(to).toBeLessThan(12_000)
    expect(offset).toBe(to)
    // The part and its header fit in what the threshold allows.
    expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(2_000)
  })
})

describe('a tool result between a low threshold and keepToolTokens', () => {
  // threshold 0.1 of 20,000 tokens: 2,000, below the 5,000 a compaction keeps of the latest tool
  // output (keepToolTokens, at most a quarter of the window). A 12,000-character result (about
  // 3,000 tokens) is past the one and within the other: pruning it not, nothing else to free.
  async function reading(size: number, compaction: Record<string, unknown> = {}) {
    const stack = await setUp({
      window: 20_000,
      compaction: { threshold: 0.1, target: 0.05, keepTurns: 1, ...compaction },
      answer: (request) => {
        const last = request.messages.at(-1)!
        const recall = /recall_result \{"call_id": "(\w+)"\}/.exec(textOf(last))
        if (last.source.kind === 'tool' && recall && !request.messages.some((message) => message.content.some((block) => block.type === 'tool-call' && block.name === 'recall_result'))) {
          return [{ toolCall: { id: 'r1', name: 'recall_result', arguments: JSON.stringify({ call_id: recall[1] }) } }]
        }
        if (last.source.kind === 'tool') return [{ text: 'done' }]
        return [{ toolCall: { id: 'h1', name: 'huge', arguments: '{}' } }]
      },
    })
    stack.root.tools.register(defineTool({ name: 'huge', description: 'Reads a huge file.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['read'], execute: () => 'y'.repeat(size) }))
    const agent = await stack.root.agents.create()
    return { ...stack, agent, result: await agent.send('read') }
  }

  it('does not end the turn CONTEXT_FULL when the window holds the request: the result is served in parts, as a recall serves it', async () => {
    const { agent, result } = await reading(12_000)
    expect(result).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first!.pruned.map((entry) => entry.callId)).toEqual(['h1'])
    // The recall gave back a first part that fits what the threshold allows, and said how to read on.
    const recalled = agent.session.events.find((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === 'r1')!
    const text = textOf({ content: [{ type: 'tool-result', toolCallId: '', content: eventData(recalled, 'tool/result').content }] } as never)
    expect(text).toMatch(/^\[characters 0–\d+ of the 12000 of h1's result; too big to show whole/)
    expect(Math.ceil(text.length / 4)).toBeLessThanOrEqual(2_000)
  })

  it('says to raise compaction.threshold when CONTEXT_FULL ends a turn whose request the window itself holds', async () => {
    // A first message of about 3,000 tokens is kept verbatim: nothing can free it, and it is past
    // the 2,000 the threshold allows while far inside the 20,000-token window.
    const { root } = await setUp({ window: 20_000, compaction: { threshold: 0.1, target: 0.05 }, answer: () => [{ text: 'ok' }] })
    const agent = await root.agents.create()
    const result = await agent.send('w'.repeat(12_000))
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL' } })
    expect(result.error!.message).toMatch(/past the 2000 tokens compaction\.threshold \(0\.1\) allows of a 20000-token window, which itself has room for it; raise compaction\.threshold/)
  })
})

describe('summarizing', () => {
  /** Turns of long user messages and no tools: pruning frees nothing. */
  async function talkative(options: Parameters<typeof setUp>[0] = {}) {
    const stack = await setUp({ answer: () => [{ text: 'ok' }], ...options })
    const agent = await stack.root.agents.create()
    const say = (n: number) => agent.send(`${'words '.repeat(400)}${n}`)
    return { ...stack, agent, say }
  }

  it('replaces the range before the kept turns with one summary where it began, keeping the first message verbatim', async () => {
    const { llm, agent, say } = await talkative({ compaction: { keepTurns: 1 } })
    for (let n = 1; n <= 8; n++) expect(await say(n)).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first!.summary).toMatchObject({ provider: 'scripted', model: 'm' })
    expect(first!.summary!.text).toContain('## Goal')
    expect(first!.summary!.text).toContain('## Files (from the session log)')
    const summaryRequest = llm.requests.find(isSummaryRequest)!
    expect(summaryRequest.tools).toBeUndefined()
    const next = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!
    expect(textOf(next.messages[0]!)).toContain('words words')
    expect(textOf(next.messages[0]!)).toMatch(/ 1$/)
    expect(next.messages[1]!.source).toEqual({ kind: 'plugin', plugin: 'compaction' })
    expect(textOf(next.messages[1]!)).toContain('## Decisions')
  })

  it('updates the previous summary rather than summarizing a summary', async () => {
    const { llm, agent, say } = await talkative({ compaction: { keepTurns: 1 } })
    for (let n = 1; n <= 16; n++) await say(n)
    const all = compactions(agent.session.events).filter((data) => data.summary)
    expect(all.length).toBeGreaterThan(1)
    const second = llm.requests.filter(isSummaryRequest)[1]!
    expect(textOf(second.messages[0]!)).toContain('The summary so far:')
    // One summary message at most in what the model reads.
    const next = agent.session.messages()
    expect(next.filter((message) => message.source.kind === 'plugin')).toHaveLength(1)
    expect(all[1]!.summary!.fromSeq).toBe(all[0]!.summary!.fromSeq)
  })

  const failing = () => [{ fail: { code: 'BAD_REQUEST', message: 'summary server says no', retryable: false } as never }] as ScriptedTurn

  it('prunes only, and says so, when the summary request fails', async () => {
    const { root } = await setUp({ summary: failing, compaction: { target: 0.1 } })
    const agent = await root.agents.create()
    const said: unknown[] = []
    agent.subscribe((event) => { if (event.type === 'compacted') said.push(event) })
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first!.pruned.length).toBeGreaterThan(0)
    expect(first!.summary).toBeUndefined()
    expect(first!.summaryFailed).toMatchObject({ message: expect.stringContaining('summary server says no') })
    expect(said[0]).toMatchObject({ summarized: false, summaryFailed: { message: expect.stringContaining('summary server says no') } })
  })

  it('ends the turn with CONTEXT_FULL, naming the failed summary, when nothing else can be freed', async () => {
    const { agent, say } = await talkative({ compaction: { keepTurns: 1 }, summary: failing })
    // Instead of compacting again at every step.
    const message = await contextFull(say)
    expect(message).toContain('the summary failed')
    // The way on that does not lose the conversation: the summary asked again later.
    expect(message).toContain('or compact again once the summary route answers')
    expect(compactions(agent.session.events)).toEqual([])
  })

  it.each([
    ['the summary came back unusable: to summarize with another model', { summary: () => [{ text: `## Goal\n${'S'.repeat(3_000)}` }] },
      '(the summary failed: SUMMARY_TOO_LONG: ', '; or set compaction.summaryRoute to another model, one that can summarize this conversation'],
    ['the turn\'s budget left no room for the summary: to give it budget', { agent: { maxOutputTokens: 100 } },
      '(the summary failed: MAX_OUTPUT_TOKENS: no summary request was sent', '; or give the turn a larger budget, or compact outside a turn, where no turn budget applies'],
  ] as const)('says why and how to get a summary, not to wait for the route, when CONTEXT_FULL ends the turn because %s', async (_why, options, cause, advice) => {
    const { say } = await talkative({ compaction: { keepTurns: 1 }, ...options })
    const message = await contextFull(say)
    expect(message).toContain(cause)
    expect(message).toContain(advice)
    expect(message).not.toContain('once the summary route answers')
  })
})

/** Says long messages until a turn ends in an error (at most 8), checks it is CONTEXT_FULL, and gives its message. */
async function contextFull(say: (n: number) => Promise<TurnResult>): Promise<string> {
  let last: TurnResult | undefined
  for (let n = 1; n <= 8 && last?.reason !== 'error'; n++) last = await say(n)
  expect(last).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL' } })
  return last?.error?.message ?? ''
}

describe('the summary request\'s attempts, as subscribers hear them', () => {
  /** A summary route that fails once (retried), then answers. */
  function flaky() {
    let failed = false
    return (): ScriptedTurn => {
      if (failed) return [{ text: SUMMARY }]
      failed = true
      return [{ fail: { code: 'SERVER', message: 'summary server hiccup', retryable: true } as never }]
    }
  }
  const heard = (events: AgentEvent[]) => events.filter((event) => event.type === 'retry' || event.type === 'attempt').map((event) => event.type)

  it('tells a retry and the attempts of a summary inside a turn, as it tells a step\'s', async () => {
    const { root } = await setUp({ summary: flaky(), compaction: { target: 0.1, keepTurns: 1 } })
    const agent = await root.agents.create()
    const events: AgentEvent[] = []
    agent.subscribe((event) => { events.push(event) })
    for (let turn = 1; turn <= 8 && !compactions(agent.session.events).some((data) => data.summary); turn++) await agent.send(`task ${turn}`)
    expect(compactions(agent.session.events).some((data) => data.summary)).toBe(true)
    expect(events.some((event) => event.type === 'retry' && event.failure.message === 'summary server hiccup')).toBe(true)
  })

  it('tells them for a compaction between turns (rein compact) too', async () => {
    const { root } = await setUp({ summary: flaky(), compaction: { keepTurns: 1 } })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const events: AgentEvent[] = []
    agent.subscribe((event) => { events.push(event) })
    const data = await agent.compactNow()
    expect(data?.summary).toBeDefined()
    expect(heard(events)).toEqual(['attempt', 'retry', 'attempt'])
  })
})

describe('what a summary tells the model about the results it folded in', () => {
  it('says they are not shown again and names the latest by call id for recall_result (their stubs go with the range), rather than only "the full history is kept"', async () => {
    const { root, llm } = await setUp({ compaction: { target: 0.1, keepTurns: 1 } })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 16; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const summarized = compactions(agent.session.events).find((data) => data.summary)
    expect(summarized).toBeDefined()
    const after = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!
    const summary = after.messages.find((message) => message.source.kind === 'plugin')!
    const text = textOf(summary)
    expect(text).toContain('(Tool results summarized here are not shown again; recall_result shows one by its call id, the latest first: ')
    // What the model reads has no stub of a result the summary folded in: the note names them instead.
    const folded = agent.session.events.filter((event) => event.type === 'tool/result' && event.seq >= summarized!.summary!.fromSeq && event.seq <= summarized!.summary!.toSeq).map((event) => eventData(event, 'tool/result').callId)
    expect(folded.length).toBeGreaterThan(0)
    expect(folded.filter((id) => after.messages.some((message) => textOf(message).includes(`"call_id": "${id}"`)))).toEqual([])
    const latest = agent.session.events.filter((event) => event.type === 'tool/result' && event.seq <= summarized!.summary!.toSeq).map((event) => eventData(event, 'tool/result').callId).at(-1)
    expect(summarized!.summary!.text).toContain(`the latest first: ${latest} (dump, 2,000 characters)`)
    // Read again as the previous summary, the note is not summarized into the next one.
    const next = llm.requests.filter(isSummaryRequest).find((request) => lastText(request).includes('The summary so far:'))
    expect(next).toBeDefined()
    expect(lastText(next!)).not.toContain('are not shown again')
  })
})

describe('a summary request refused as too long by the provider', () => {
  /** Turns of long user messages and no tools; the summary route refuses, as too long, the requests `refuse` picks. */
  async function refusing(refuse: (prompt: string, sent: readonly string[]) => boolean, compaction: Record<string, unknown> = {}) {
    const sent: string[] = []
    const stack = await setUp({
      answer: () => [{ text: 'ok' }],
      compaction: { keepTurns: 1, ...compaction },
      summary: (request) => {
        const prompt = lastText(request)
        sent.push(prompt)
        return refuse(prompt, sent) ? [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'the prompt is too long for this model' } as never }] : [{ text: SUMMARY }]
      },
    })
    const agent = await stack.root.agents.create()
    return { ...stack, agent, sent, say: (n: number) => agent.send(`${'words '.repeat(400)}${n}`) }
  }

  it('is sent again with a smaller range, and the summary of that range is written', async () => {
    // Only the first summary request is too long for the provider (its tokenizer counts more than rein's).
    const { agent, sent, say } = await refusing((_prompt, all) => all.length === 1)
    for (let n = 1; n <= 8 && !compactions(agent.session.events).some((data) => data.summary); n++) expect(await say(n)).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first).toMatchObject({ summary: expect.objectContaining({ text: expect.stringContaining('## Goal') }) })
    expect(first!.summaryFailed).toBeUndefined()
    expect(sent).toHaveLength(2)
    expect(sent[1]!.length).toBeLessThan(sent[0]!.length * 0.75)
    // Both requests are logged, the refusal as the failed attempt it was.
    const attempts = agent.session.events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
    expect(attempts.filter((attempt) => attempt.failure?.code === 'CONTEXT_WINDOW_EXCEEDED')).toHaveLength(1)
    expect(agent.session.events.filter((event) => event.type === 'summary/start')).toHaveLength(2)
  })

  it('gives up with the refusal after a bounded number of smaller ranges, each smaller than the last', async () => {
    const { agent, sent, say } = await refusing(() => true)
    let last
    for (let n = 1; n <= 8 && last?.reason !== 'error'; n++) last = await say(n)
    expect(last).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL', message: expect.stringContaining('CONTEXT_WINDOW_EXCEEDED') } })
    expect(sent.length).toBeGreaterThan(1)
    expect(sent.length).toBeLessThanOrEqual(4)
    for (let index = 1; index < sent.length; index++) expect(sent[index]!.length).toBeLessThan(sent[index - 1]!.length)
    expect(compactions(agent.session.events)).toEqual([])
  })

  it('gives up at once when the room for the answer alone is most of the window: a smaller transcript would be refused as well', async () => {
    // 2,100 of the 4,000-token window go to the answer: the refusal is of that, not of the transcript.
    const { agent, sent, say } = await refusing(() => true, { summaryMaxTokens: 2_100 })
    let last
    for (let n = 1; n <= 8 && last?.reason !== 'error'; n++) last = await say(n)
    expect(last).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL', message: expect.stringContaining('CONTEXT_WINDOW_EXCEEDED') } })
    expect(sent).toHaveLength(1)
    expect(agent.session.events.filter((event) => event.type === 'summary/start')).toHaveLength(1)
  })
})

describe('bad input', () => {
  it('refuses a first message bigger than the window with CONTEXT_FULL, without a request or a loop, and logs no "failed unexpectedly" error', async () => {
    const { root, llm } = await setUp()
    const errors: string[] = []
    const exporter: Exporter = { levels: { default: 2 }, export: (message) => { if (message.type === 'error') errors.push(Logger.format(exporter, message)) } }
    root.logger.exporter(exporter)
    const agent = await root.agents.create()
    const result = await agent.send('y'.repeat(4 * WINDOW))
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL' } })
    expect(llm.requests.filter((request) => !isSummaryRequest(request))).toEqual([])
    expect(errors).toEqual([])
  })

  it('a tool call whose arguments alone fill the window does not end its turn CONTEXT_FULL: the arguments are pruned, their short fields kept', async () => {
    // The model sends a call far bigger than the window (refused: no such tool); its arguments stay in the log.
    const huge = JSON.stringify({ path: 'notes.txt', text: 'z'.repeat(6 * WINDOW) })
    const store = new MemorySessionStore()
    const { root, llm } = await setUp({ store, answer: (request) => (request.messages.length === 1 ? [{ toolCall: { id: 'big', name: 'nope', arguments: huge } }] : [{ text: 'done' }]) })
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'done' })
    const [compacted] = compactions(agent.session.events)
    expect(compacted?.prunedArguments).toEqual([{ callId: 'big', name: 'nope', chars: huge.length }])
    const answer = llm.requests.at(-1)!.messages.find((message) => message.role === 'assistant')!
    expect(answer.content).toEqual([expect.objectContaining({ type: 'tool-call', id: 'big', arguments: `{"path":"notes.txt","text":"[${6 * WINDOW} characters left out to save context]"}` })])
    // The log keeps the call whole, and a resume derives what the model saw.
    expect(agent.session.events.find((event) => event.type === 'tool/call')).toMatchObject({ data: { arguments: huge } })
    const live = agent.session.messages()
    await agent.close()
    expect(deriveMessages((await root.sessions.load(agent.session.id)).events)).toEqual(live)
  })

  it.each([
    ['not JSON', '{"text": "' + 'z'.repeat(6 * WINDOW)],
    ['not an object', JSON.stringify(['z'.repeat(6 * WINDOW)])],
  ])('prunes a call\'s arguments that are %s to one field saying so', async (_what, huge) => {
    const { root, llm } = await setUp({ answer: (request) => (request.messages.length === 1 ? [{ toolCall: { id: 'big', name: 'nope', arguments: huge } }] : [{ text: 'done' }]) })
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'done' })
    const answer = llm.requests.at(-1)!.messages.find((message) => message.role === 'assistant')!
    expect(answer.content).toEqual([expect.objectContaining({ arguments: `{"arguments":"[${huge.length} characters left out to save context]"}` })])
  })

  it('says the system prompt and the tools alone fill the window, rather than blame the messages, when they do', async () => {
    const { root } = await setUp({ agent: { system: 'Be brief. '.repeat(1_500) } })
    const agent = await root.agents.create()
    const result = await agent.send('hi')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_FULL' } })
    expect(result.error?.message).toMatch(/^the system prompt and the tool definitions alone are about [\d,]+ tokens, past the \d+ a 4000-token window allows with room for the answer; use a model with a larger window, or a shorter system prompt and fewer tools$/)
  })

  it('runs without compaction, warning once, for a model whose window is not known', async () => {
    const { root } = await setUp({ window: undefined })
    const warnings: string[] = []
    const exporter: Exporter = { levels: { default: 2 }, export: (message) => { if (message.type === 'warn') warnings.push(Logger.format(exporter, message)) } }
    root.logger.exporter(exporter)
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    expect(compactions(agent.session.events)).toEqual([])
    expect(warnings).toEqual([expect.stringContaining('compaction is off for scripted/m: its context window is not known')])
  })
})

describe('the summary attempt inside a turn', () => {
  it('tells listeners what the summary request asked and answered, not the conversation', async () => {
    const { root } = await setUp()
    const heard = listen(root)
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 4; turn++) await agent.send(`task ${turn}`)
    agent.compact()
    await agent.send('task 5')
    const ends = heard.filter((entry) => entry.name === 'agent/llm-end').map((entry) => entry.event as LifecycleEvents['agent/llm-end'])
    const summary = ends.find((event) => event.input.system?.startsWith('You write the summary'))
    expect(summary).toBeDefined()
    expect(summary!.input.messages).toHaveLength(1)
    expect(summary!.output?.()).toEqual([{ type: 'text', text: SUMMARY }])
  })
})

describe('asked for', () => {
  it('compacts before the next request with the instructions, under the threshold too', async () => {
    const { root, llm } = await setUp()
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 4; turn++) await agent.send(`task ${turn}`)
    expect(compactions(agent.session.events)).toEqual([])
    agent.compact('keep the file names')
    await agent.send('task 5')
    const [data] = compactions(agent.session.events)
    expect(data).toMatchObject({ reason: 'manual', instructions: 'keep the file names' } satisfies Partial<ContextCompacted>)
    expect(textOf(llm.requests.find(isSummaryRequest)!.messages[0]!)).toContain('keep the file names')
    expect(data!.summary!.text).toContain('- read: src/big.txt')
  })
})

describe('compacting between turns', () => {
  it('compacts a stored session now, logging the summary request as a spend of the agent', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await setUp({ store })
    const first = await root.agents.create()
    for (let turn = 1; turn <= 4; turn++) await first.send(`task ${turn}`)
    await first.close()
    const { agent } = await root.agents.resume(first.session.id)
    const before = agent.session.messages().length
    const data = await agent.compactNow('keep the file names')
    expect(data).toMatchObject({ reason: 'manual', instructions: 'keep the file names', summary: { text: expect.stringContaining('- read: src/big.txt') } })
    expect(agent.session.messages().length).toBeLessThan(before)
    expect(agent.session.events.filter((event) => event.type === 'llm/attempt').length).toBe(llm.requests.length)
    expect(agent.usage.inputTokens).toBeGreaterThan(0)
    expect(await agent.send('task 5')).toMatchObject({ reason: 'completed' })
  })

  it('starts "about X" from what the provider last reported it read, as a compaction in a turn does, not from a count of characters', async () => {
    const store = new MemorySessionStore()
    // A provider whose tokenizer reads far more than a token per 4 characters.
    const reporting = (request: AdapterRequest): ScriptedTurn => [...(dumping(request) as readonly ScriptedStep[]), { usage: { inputTokens: 2_600, outputTokens: 5 } }]
    const { root } = await setUp({ store, answer: reporting })
    const first = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await first.send(`task ${turn}`)
    await first.close()
    const { agent } = await root.agents.resume(first.session.id)
    const data = await agent.compactNow()
    expect(data?.tokensBefore).toBeGreaterThanOrEqual(2_600)
  })

  it('is told to lifecycle listeners as a run of its own, its summary attempt with what it asked and answered (telemetry traces its spend)', async () => {
    const { root } = await setUp({ summary: () => [{ text: SUMMARY }, { usage: { inputTokens: 700, outputTokens: 40 } }] })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const heard = listen(root)
    await agent.compactNow()
    expect(heard.map((entry) => entry.name)).toEqual(['agent/compaction-start', 'agent/llm-start', 'agent/llm-end', 'agent/compaction-end'])
    const turnRuns = agent.session.events.filter((event) => event.type === 'turn/start').map((event) => eventData(event, 'turn/start').runId)
    const { identity } = heard[0]!.event
    expect(turnRuns).not.toContain(identity.runId)
    for (const { event } of heard) expect(event).toMatchObject({ identity, turn: 3 })
    const end = heard[2]!.event as LifecycleEvents['agent/llm-end']
    expect(end).toMatchObject({ step: 0, usage: { inputTokens: 700, outputTokens: 40 } })
    expect(end.input.system).toMatch(/^You write the summary/)
    expect(end.output?.()).toEqual([{ type: 'text', text: SUMMARY }])
    expect(heard[3]!.event).toMatchObject({ reason: 'completed', usage: { inputTokens: 700, outputTokens: 40 } })
  })

  it('tells listeners a cancelled compaction ended aborted', async () => {
    const { root } = await setUp({ compaction: { summaryRoute: { provider: 'silent', model: 'm' } } })
    root.llm.registerAdapter('silent', silentAdapter())
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const heard = listen(root)
    const compacting = agent.compactNow()
    await vi.waitFor(() => expect(heard.map((entry) => entry.name)).toContain('agent/llm-start'))
    agent.cancel()
    await expect(compacting).rejects.toMatchObject({ code: 'ABORTED' })
    expect(heard.at(-1)).toMatchObject({ name: 'agent/compaction-end', event: { reason: 'aborted' } })
  })

  it('refuses a turn while it compacts, and compacting while a turn runs', async () => {
    const { root } = await setUp()
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const compacting = agent.compactNow()
    await expect(agent.send('now')).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    await compacting
    const turn = agent.send('task 4')
    await expect(agent.compactNow()).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    await turn
  })
})

describe('the meter and the summary request', () => {
  it('compacts on what the provider reported reading, when that is far above the character count', async () => {
    const { root } = await setUp({
      window: 60_000,
      // A provider whose tokenizer counts this text as ~49k tokens, where 4 characters a token says ~1k.
      answer: (request) => [...(dumping(request) as ScriptedStep[]), { usage: { inputTokens: 49_000, outputTokens: 5 } }],
    })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    expect(compactions(agent.session.events).length).toBeGreaterThan(0)
  })

  it('cuts the range to what the summary route can read, leaving the rest to the model whole, never dropped unread', async () => {
    const { root, llm } = await boot(script(() => [{ text: 'ok' }]), {
      models: [{ id: 'm', contextWindow: WINDOW }, { id: 'small', contextWindow: 1_500 }],
      agent: { compaction: { ...COMPACTION, keepTurns: 1, summaryRoute: { provider: 'scripted', model: 'small' } } as never },
    })
    const agent = await root.agents.create()
    for (let n = 1; n <= 8; n++) await agent.send(`${'words '.repeat(400)}${n}`)
    const summaries = llm.requests.filter(isSummaryRequest)
    expect(summaries.length).toBeGreaterThan(0)
    for (const request of summaries) expect(JSON.stringify(request.messages).length / 4 + (request.system?.length ?? 0) / 4).toBeLessThanOrEqual(1_500 - 256)
    // Every message a person wrote is in the next request, or was read by a summary request.
    const read = summaries.map((request) => JSON.stringify(request.messages)).join('')
    const last = llm.requests.filter((request) => !isSummaryRequest(request)).at(-1)!
    for (let n = 1; n <= 8; n++) {
      const said = `${'words '.repeat(400)}${n}`
      expect(read.includes(`${n}`) || last.messages.some((message) => textOf(message) === said), `message ${n}`).toBe(true)
    }
  })

  it('does not summarize at every turn once the kept turns alone are big: it cuts deeper', async () => {
    const { root, llm } = await setUp({ answer: () => [{ text: 'ok' }] })
    const agent = await root.agents.create()
    for (let n = 1; n <= 30; n++) expect(await agent.send(`${'words '.repeat(400)}${n}`)).toMatchObject({ reason: 'completed' })
    // The window holds about five of these messages: a summary every two or three turns, not every turn.
    expect(llm.requests.filter(isSummaryRequest).length).toBeLessThanOrEqual(15)
  })
})

describe('stopping a compaction', () => {
  it('writes nothing when cancelled while the summary is written, and the agent goes on', async () => {
    const { root } = await setUp({ compaction: { summaryRoute: { provider: 'silent', model: 'm' } } })
    root.llm.registerAdapter('silent', silentAdapter())
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const before = agent.session.events.length
    const compacting = agent.compactNow()
    await vi.waitFor(() => expect(agent.status).toBe('running'))
    agent.cancel()
    await expect(compacting).rejects.toMatchObject({ code: 'ABORTED' })
    expect(compactions(agent.session.events)).toEqual([])
    // Only bookkeeping: the request's mark and its (aborted) attempt.
    expect(agent.session.events.slice(before).map((event) => event.type)).toEqual(['summary/start', 'llm/attempt'])
    expect(agent.status).toBe('idle')
    expect(await agent.send('task 4')).toMatchObject({ reason: 'completed' })
  })
})

describe('a provider that refuses a request as too long', () => {
  it('ends the turn on the refusal when the meter under-counted, instead of compacting and asking once more', async () => {
    const sizes: number[] = []
    // This provider's tokenizer reads 2 characters a token: twice what the meter counts.
    const strict = (request: AdapterRequest): ScriptedTurn => {
      if (isSummaryRequest(request)) return [{ text: SUMMARY }]
      const size = JSON.stringify(request.messages).length / 2
      sizes.push(size)
      if (size > WINDOW) return [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: `${size} tokens is over ${WINDOW}` } as never }]
      return dumping(request)
    }
    const { root } = await setUp({ answer: strict })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const overflow = compactions(agent.session.events).find((data) => data.reason === 'overflow')
    expect(overflow).toBeDefined()
    expect(sizes.filter((size) => size > WINDOW)).toHaveLength(compactions(agent.session.events).filter((data) => data.reason === 'overflow').length)
  })
})

/** The text of the request's last message: a person's, or for a summary request its whole prompt. */
const lastText = (request: AdapterRequest) => {
  const last = request.messages.at(-1)
  return last ? textOf(last) : ''
}

describe('a summary that would not shorten the request', () => {
  const say = async (agent: { send: (text: string) => Promise<unknown> }, texts: readonly string[]) => { for (const text of texts) await agent.send(text) }

  it('is not written when longer than the range it replaces: the history stays as it was and the session goes on', async () => {
    const long = `## Goal\n${'The person greeted the assistant in detail. '.repeat(20)}`
    const { root } = await setUp({ answer: () => [{ text: 'hi' }], summary: () => [{ text: long }] })
    const agent = await root.agents.create()
    await say(agent, ['hello', 'how are you', 'fine', 'bye'])
    const before = agent.session.messages()
    const data = await agent.compactNow()
    expect(data).toMatchObject({ pruned: [], summaryFailed: { code: 'SUMMARY_NOT_SHORTER' } })
    expect(data?.summary).toBeUndefined()
    expect(compactions(agent.session.events)).toEqual([])
    expect(agent.session.messages()).toEqual(before)
    expect(await agent.send('again')).toMatchObject({ reason: 'completed' })
  })

  it('is not written in a turn either, where the pruning still is', async () => {
    // Twice the transcript it was given: always longer than the range.
    const { root } = await setUp({ compaction: { target: 0.1, summaryMaxTokens: 2_048 }, summary: (request) => [{ text: `## Goal\n${lastText(request).repeat(2)}` }] })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 8; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const [first] = compactions(agent.session.events)
    expect(first).toMatchObject({ pruned: expect.arrayContaining([expect.anything()]), summaryFailed: { code: 'SUMMARY_NOT_SHORTER' } })
    expect(first?.summary).toBeUndefined()
    expect(first?.tokensAfter).toBeLessThan(first?.tokensBefore ?? 0)
  })

  it('is not written when longer than the output budget the summary request had', async () => {
    const { root } = await setUp({ answer: () => [{ text: 'ok' }], summary: () => [{ text: `## Goal\n${'S'.repeat(3_000)}` }] })
    const agent = await root.agents.create()
    await say(agent, [1, 2, 3, 4].map((n) => `${'words '.repeat(400)}${n}`))
    const data = await agent.compactNow()
    expect(data).toMatchObject({ summaryFailed: { code: 'SUMMARY_TOO_LONG', message: expect.stringContaining('256 output tokens') } })
    expect(compactions(agent.session.events)).toEqual([])
  })

  it('says what is wrong, with no negative budget and no request, when the instructions alone fill the summary route\'s window', async () => {
    const { root, llm } = await setUp({ answer: () => [{ text: 'ok' }] })
    const agent = await root.agents.create()
    await say(agent, ['task 1', 'task 2', 'task 3'])
    const data = await agent.compactNow('keep '.repeat(5_000))
    expect(data).toMatchObject({ summaryFailed: { code: 'SUMMARY_TOO_BIG', message: expect.stringContaining('instructions') } })
    expect(data?.summaryFailed?.message).not.toMatch(/-\d/)
    expect(data?.summaryFailed?.message).not.toContain('request failed')
    expect(llm.requests.filter(isSummaryRequest)).toEqual([])
  })
})

/** A store that knows which events reached it: what a crash would leave. */
class RecordingStore extends MemorySessionStore {
  readonly durable: SessionEvent[] = []
  override async append(id: string, events: readonly SessionEvent[]): Promise<void> {
    await super.append(id, events)
    this.durable.push(...events)
  }
}

describe('the log before a summary request', () => {
  it('makes the finished tool results durable before an in-turn summary request is sent', async () => {
    const store = new RecordingStore()
    const seen: { durable: string[]; written: string[] }[] = []
    const holder: { agent?: Agent } = {}
    const { root } = await setUp({
      store,
      answer: (request) => (lastText(request) === 'note it' ? [{ toolCall: { id: 'n1', name: 'note', arguments: '{}' } }] : dumping(request)),
      summary: () => {
        seen.push({ durable: store.durable.map((event) => event.type), written: (holder.agent?.session.events ?? []).map((event) => event.type) })
        return [{ text: SUMMARY }]
      },
    })
    // A tool that asks for a compaction: it comes before the next request of the same turn, after this result.
    root.tools.register(defineTool({ name: 'note', description: 'Notes.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => { holder.agent?.compact(); return 'noted' } }))
    const agent = holder.agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    expect(await agent.send('note it')).toMatchObject({ reason: 'completed' })
    const [atSummary] = seen
    expect(seen).toHaveLength(1)
    expect(atSummary?.written).toContain('tool/result')
    expect(atSummary?.durable).toEqual(atSummary?.written)
  })
})

describe('an automatic compaction inside one long turn', () => {
  const TASK = 'TASK-42: read src/big.txt over and over, then say done'
  /** Turn 1 is a greeting; turn 2 (TASK) calls `dump` `calls` times before it answers. */
  async function longSecondTurn(calls: number, task = TASK) {
    let made = 0
    const { root, llm } = await setUp({
      compaction: { target: 0.1 },
      answer: (request) => {
        // Turn 1's only request holds the greeting alone.
        if (request.messages.length === 1) return [{ text: 'hi' }]
        return made++ < calls ? [{ toolCall: { id: `d${made}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }] : [{ text: 'done' }]
      },
    })
    const agent = await root.agents.create()
    expect(await agent.send('hello')).toMatchObject({ reason: 'completed' })
    expect(await agent.send(task)).toMatchObject({ reason: 'completed' })
    return { root, agent, llm }
  }

  it('keeps the turn\'s own user message verbatim after the summary, not only in the summary\'s words', async () => {
    const { agent, llm } = await longSecondTurn(12)
    const summarized = compactions(agent.session.events).filter((data) => data.summary)
    // The summary is updated more than once in the turn, and the message is kept each time.
    expect(summarized.length).toBeGreaterThan(1)
    const task = agent.session.events.find((event) => event.type === 'user/message' && textOf(eventData(event, 'user/message').message) === TASK)!
    for (const data of summarized) expect(data.summary!.keptSeq).toBe(task.seq)
    const afterFirst = llm.requests.filter((each) => !isSummaryRequest(each)).slice(-4)
    for (const request of afterFirst) {
      const texts = request.messages.map(textOf)
      expect(texts[0]).toBe('hello')
      expect(request.messages[1]!.source).toEqual({ kind: 'plugin', plugin: 'compaction' })
      expect(texts[1]).toContain('repeated from the conversation it covers, word for word')
      expect(texts[2]).toBe(TASK)
      expect(request.messages[2]!.source.kind).toBe('user')
      expect(texts.filter((text) => text.includes('TASK-42'))).toHaveLength(1)
    }
    // The summary's writer reads the request it summarizes the work on.
    for (const request of llm.requests.filter(isSummaryRequest)) expect(JSON.stringify(request.messages)).toContain('TASK-42')
  })

  it('summarizes the message once its turn is over and the range passes it', async () => {
    const { agent } = await longSecondTurn(12)
    for (let n = 1; n <= 6; n++) expect(await agent.send(`${'words '.repeat(400)}${n}`)).toMatchObject({ reason: 'completed' })
    const last = compactions(agent.session.events).filter((data) => data.summary).at(-1)!
    expect(last.summary!.keptSeq).not.toBe(agent.session.events.find((event) => event.type === 'user/message' && textOf(eventData(event, 'user/message').message) === TASK)!.seq)
    expect(agent.session.messages().map(textOf)).not.toContain(TASK)
  })

  it('does not keep a request too big to keep (a pasted file): it is summarized as before', async () => {
    const { agent } = await longSecondTurn(12, `${TASK} ${'pasted '.repeat(300)}`)
    const summarized = compactions(agent.session.events).filter((data) => data.summary)
    expect(summarized.length).toBeGreaterThan(0)
    for (const data of summarized) expect(data.summary!.keptSeq).toBeUndefined()
    expect(agent.session.messages().some((message) => textOf(message).startsWith(TASK))).toBe(false)
  })

  it('rebuilds the same messages from the stored log, the kept message included', async () => {
    const { root, agent } = await longSecondTurn(8)
    const live = agent.session.messages()
    expect(live.map(textOf)).toContain(TASK)
    await agent.close()
    expect(deriveMessages((await root.sessions.load(agent.session.id)).events)).toEqual(live)
  })

  /** Turn 1 is a greeting, turn 2 is TASK; `calls(request)` says whether each later request calls `dump`. */
  async function afterTask(calls: (request: AdapterRequest) => boolean, agent: AgentConfigInput = {}) {
    const { root, llm } = await setUp({
      compaction: { target: 0.1 },
      agent,
      answer: (request) => {
        if (request.messages.length === 1) return [{ text: 'hi' }]
        return calls(request) ? [{ toolCall: { id: `d${request.messages.length}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }] : [{ text: 'done' }]
      },
    })
    const created = await root.agents.create()
    expect(await created.send('hello')).toMatchObject({ reason: 'completed' })
    return { root, llm, agent: created }
  }

  it('does not repeat a request whose turn completed as still being worked on, in a turn continued with news', async () => {
    // TASK is answered at once; the news that continues the session takes many calls.
    let made = 0
    const { agent } = await afterTask((request) => textOf(request.messages.at(-1)!) !== TASK && made++ < 12)
    expect(await agent.send(TASK)).toMatchObject({ reason: 'completed', text: 'done' })
    agent.inject({ plugin: 'jobs', text: 'job 7 finished: read its output' })
    expect(await agent.continue()).toMatchObject({ reason: 'completed' })
    const summarized = compactions(agent.session.events).filter((data) => data.summary)
    expect(summarized.length).toBeGreaterThan(0)
    for (const data of summarized) expect(data.summary!.keptSeq).toBeUndefined()
    expect(agent.session.messages().map(textOf)).not.toContain(TASK)
  })

  it('keeps the request of a turn cut off unfinished in the turn that continues it', async () => {
    // TASK runs out of steps mid-work; a continue goes on with it.
    const { agent } = await afterTask(() => true, { maxSteps: 8 })
    expect(await agent.send(TASK)).toMatchObject({ reason: 'budget' })
    const before = agent.session.events.length
    expect(await agent.continue()).toMatchObject({ reason: 'budget' })
    const task = agent.session.events.find((event) => event.type === 'user/message' && textOf(eventData(event, 'user/message').message) === TASK)!
    const inContinued = compactions(agent.session.events.slice(before)).filter((data) => data.summary)
    expect(inContinued.length).toBeGreaterThan(0)
    for (const data of inContinued) expect(data.summary!.keptSeq).toBe(task.seq)
  })

  it('sends no summary request when all it would fold in is the kept request (a refusal right after a summary)', async () => {
    let made = 0
    let refused = false
    const { root, llm } = await setUp({
      compaction: { target: 0.1 },
      answer: (request) => {
        if (request.messages.length === 1) return [{ text: 'hi' }]
        // The first request after a summary is refused as too long: the range is then the summary and the kept request.
        if (!refused && request.messages.some((message) => message.source.kind === 'plugin')) {
          refused = true
          return [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long' } as never }]
        }
        return made++ < 12 ? [{ toolCall: { id: `d${made}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }] : [{ text: 'done' }]
      },
    })
    const agent = await root.agents.create()
    expect(await agent.send('hello')).toMatchObject({ reason: 'completed' })
    expect(await agent.send(TASK)).toMatchObject({ reason: 'completed' })
    expect(refused).toBe(true)
    // Every summary request was worth its answer: each gave a summary the log kept.
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(compactions(agent.session.events).filter((data) => data.summary).length)
  })
})

describe('an asked-for compaction keeps the last turn whole', () => {
  it('finds nothing to compact when asked twice, rather than summarizing the last turn\'s request', async () => {
    // Each turn a call and an answer: the last turn alone holds two answers.
    const { root, llm } = await setUp({ window: 100_000 })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    expect((await agent.compactNow())?.summary).toBeDefined()
    expect(await agent.compactNow()).toBeUndefined()
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(1)
    expect(agent.session.messages().some((message) => message.source.kind === 'user' && textOf(message) === 'task 3')).toBe(true)
  })

  it('never cuts into the last turn, however big it is', async () => {
    // Turn 3 reads four big files in a row: more than the kept tail is meant to hold.
    const { root } = await setUp({
      answer: (request) => {
        const byPerson = (message: Message) => message.source.kind === 'user'
        const asked = request.messages.findLast(byPerson)
        const since = request.messages.length - request.messages.findLastIndex(byPerson)
        return asked && textOf(asked) === 'task 3' && since < 8 ? [{ toolCall: { id: `d${request.messages.length}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }] : dumping(request)
      },
    })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const data = await agent.compactNow()
    const lastRequest = agent.session.events.findLast((event) => event.type === 'user/message')
    expect(data?.summary?.toSeq).toBeLessThan(lastRequest?.seq ?? 0)
    expect(agent.session.messages().filter((message) => message.source.kind === 'tool')).toHaveLength(4)
  })
})

describe('the summary request inside a turn with an output budget', () => {
  /** Turn 4 calls `note`, which asks for a compaction; that first answer spends `spent` of the turn's 1,000 output tokens. */
  async function budgeted(spent: number, summary: ScriptedTurn = [{ text: SUMMARY }]) {
    const holder: { agent?: Agent } = {}
    const stack = await setUp({
      agent: { maxOutputTokens: 1_000 },
      compaction: { summaryMaxTokens: 2_048 },
      answer: (request) => (lastText(request) === 'note it' ? [{ toolCall: { id: 'n1', name: 'note', arguments: '{}' } }, { usage: { inputTokens: 10, outputTokens: spent } }] : dumping(request)),
      summary: () => summary,
    })
    stack.root.tools.register(defineTool({ name: 'note', description: 'Notes.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => { holder.agent?.compact(); return 'noted' } }))
    const agent = holder.agent = await stack.root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const said: AgentEvent[] = []
    agent.subscribe((event) => { said.push(event) })
    const sent = stack.llm.requests.length
    const result = await agent.send('note it')
    return { ...stack, agent, result, said, sentInTurn: stack.llm.requests.slice(sent) }
  }

  it('asks for no more output tokens than the turn has left', async () => {
    const { result, sentInTurn } = await budgeted(700)
    expect(result).toMatchObject({ reason: 'completed' })
    expect(sentInTurn.filter(isSummaryRequest).map((request) => request.maxTokens)).toEqual([300])
  })

  it('prunes only, sending no summary request, when the turn has too little left for a summary', async () => {
    const { result, said, sentInTurn } = await budgeted(900)
    expect(result).toMatchObject({ reason: 'completed' })
    expect(sentInTurn.filter(isSummaryRequest)).toEqual([])
    expect(said.find((event) => event.type === 'compacted')).toMatchObject({ summarized: false, summaryFailed: { code: 'MAX_OUTPUT_TOKENS' } })
  })

  it('ends the turn on its budget when the summary spent what was left, instead of sending a request for 1 token', async () => {
    const { result, sentInTurn } = await budgeted(700, [{ text: SUMMARY }, { usage: { inputTokens: 900, outputTokens: 300 } }])
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' } })
    expect(sentInTurn.at(-1)?.system).toMatch(/^You write the summary/)
  })
})

describe('what the model writes in its summary', () => {
  const ledgerFirst = '## Files (from the session log)\n- read: x\n\n## Goal\nThe user wants X\n## Decisions\nuse Y\n## Open tasks\nZ'

  it('keeps the model\'s sections when its summary opens with the file ledger heading', async () => {
    const { root } = await setUp({ summary: () => [{ text: ledgerFirst }] })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const text = (await agent.compactNow())?.summary?.text ?? ''
    expect(text).toContain('## Goal\nThe user wants X\n## Decisions\nuse Y\n## Open tasks\nZ')
    expect(text.split('## Files (from the session log)')).toHaveLength(2)
    expect(text).not.toContain('- read: x')
  })

  it('counts a summary that is only a copied file ledger as empty', async () => {
    const { root } = await setUp({ summary: () => [{ text: '## Files (from the session log)\n- read: x' }] })
    const agent = await root.agents.create()
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    expect(await agent.compactNow()).toMatchObject({ summaryFailed: { code: 'SUMMARY_EMPTY' } })
  })
})

describe('a refusal for length from a model whose window is unknown', () => {
  it('ends the turn, saying the window is unknown, instead of sending the same request again', async () => {
    const { root, llm } = await setUp({ window: undefined, answer: () => [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'the prompt is too long' } as never }] })
    const agent = await root.agents.create()
    const result = await agent.send('task 1')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: expect.stringContaining('contextWindow') } })
    expect(result.error?.message).toContain('the prompt is too long')
    expect(llm.requests).toHaveLength(1)
  })

  it('joins a refusal that ends in a full stop to what follows without a ".;" splice', async () => {
    const { root } = await setUp({ window: undefined, answer: () => [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'Please reduce the length of the messages.' } as never }] })
    const result = await (await root.agents.create()).send('task 1')
    expect(result.error?.message).toMatch(/^Please reduce the length of the messages; the context window of /)
  })
})

describe('a kept request more than the summary route can read', () => {
  const TASK = `TASK-7: ${'refactor the parser, keeping every test green; '.repeat(44)}`
  const taskSeq = (events: readonly SessionEvent[]) => events.find((event) => event.type === 'user/message' && textOf(eventData(event, 'user/message').message).startsWith('TASK-7'))!.seq
  /**
   * Talk turns, then `task`, whose turn calls `dump` 12 times, its first answer `opening`; summaries
   * go to a route with a 1,000-token window, whose summary request can read about 450 tokens.
   */
  async function smallSummaryRoute(task = TASK, opening = '', talk = 150) {
    let made = 0
    const stack = await boot(script((request) => {
      const asked = request.messages.findLast((message) => message.source.kind === 'user')
      if (!asked || textOf(asked) !== task) return [{ text: 'ok' }]
      const call = { toolCall: { id: `d${++made}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }
      return made > 12 ? [{ text: 'done' }] : made === 1 && opening ? [{ text: opening }, call] : [call]
    }), {
      models: [{ id: 'm', contextWindow: WINDOW }, { id: 'small', contextWindow: 1_000 }],
      agent: { compaction: { ...COMPACTION, keepTurns: 1, target: 0.6, summaryRoute: { provider: 'scripted', model: 'small' } } as never },
    })
    stack.root.tools.register(dumpTool())
    const agent = await stack.root.agents.create()
    for (let n = 1; n <= 6; n++) expect(await agent.send(`${'words '.repeat(talk)}${n}`)).toMatchObject({ reason: 'completed' })
    const failures: { code: string; message: string }[] = []
    agent.subscribe((event) => { if (event.type === 'compacted' && event.summaryFailed) failures.push(event.summaryFailed) })
    const result = await agent.send(task)
    const past = (data: ContextCompacted) => data.summary && data.summary.toSeq > taskSeq(agent.session.events)
    return { ...stack, agent, result, failures, pastTask: compactions(agent.session.events).filter(past) }
  }

  /** The turn completed with summaries past the task, each keeping it, and the summariser read the work without it, told why. */
  function expectSummarizedWithoutTask({ agent, result, failures, pastTask, llm }: Awaited<ReturnType<typeof smallSummaryRoute>>) {
    expect(result).toMatchObject({ reason: 'completed' })
    expect(failures).toEqual([])
    expect(pastTask.length).toBeGreaterThan(0)
    for (const data of pastTask) expect(data.summary!.keptSeq).toBe(taskSeq(agent.session.events))
    const unread = llm.requests.filter(isSummaryRequest).filter((request) => lastText(request).includes('[called dump') && !lastText(request).includes('TASK-7'))
    expect(unread.length).toBeGreaterThan(0)
    for (const request of unread) expect(lastText(request)).toContain('request this work is on is left out here, for room')
  }

  it('summarizes the work without it, rather than fail blaming "the first message to summarize"', async () => {
    const run = await smallSummaryRoute()
    const { agent, llm } = run
    expectSummarizedWithoutTask(run)
    for (const request of llm.requests.filter(isSummaryRequest)) expect(JSON.stringify(request.messages).length / 4 + (request.system?.length ?? 0) / 4).toBeLessThanOrEqual(1_000 - 256)
    // The model still reads it word for word, once, right after the summary.
    const texts = agent.session.messages().map(textOf)
    expect(texts.filter((text) => text.includes('TASK-7'))).toEqual([TASK])
    expect(texts.indexOf(TASK)).toBe(2)
  })

  it('summarizes the work past a kept request that fits the summary route only without the answer after it, rather than prune only', async () => {
    const task = `TASK-7: ${'refactor the parser, keeping every test green; '.repeat(34)}`
    const run = await smallSummaryRoute(task, `Plan: ${'read the parser, then change it; '.repeat(24)}`)
    const { agent } = run
    expectSummarizedWithoutTask(run)
    expect(agent.session.messages().map(textOf).filter((text) => text.includes('TASK-7'))).toEqual([task])
  })

  it('names the message after it, not it, when that message is what the summary route cannot read', async () => {
    const { failures } = await smallSummaryRoute(TASK, `Plan: ${'read the parser, then change it; '.repeat(60)}`, 60)
    const failed = failures.find((failure) => failure.code === 'SUMMARY_TOO_BIG')
    expect(failed?.message).toMatch(/^no summary request was sent: the first message to summarize after the request kept word for word, an answer of the model with its tool results, about \d+ tokens, is more than the \d+ tokens the 1000-token window of scripted\/small leaves for the conversation; set compaction\.summaryRoute to a model with a larger window/)
  })

  it('names a request too big to keep as the message to summarize it is', async () => {
    const pasted = `TASK-7: fix this file\n${'const parser = createParser(options) '.repeat(70)}`
    const { failures } = await smallSummaryRoute(pasted)
    const failed = failures.find((failure) => failure.code === 'SUMMARY_TOO_BIG')
    expect(failed?.message).toMatch(/^no summary request was sent: the first message to summarize, a person's message, about \d+ tokens, is more than/)
  })
})
