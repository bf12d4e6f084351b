import type { Context } from '@deepseek-ai/cordis'
import { LlmAdapter, assistantMessage, userMessage, type AdapterRequest, type StreamChunk } from '@rein/llm'
import { MemorySessionStore, type SessionEvent, type SessionStore } from '@rein/session'
import { defineTool, type ToolEffect } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { boot, expectValidLog, probeTools, types } from './fixtures.ts'

/** An adapter that gives another's whole answer as one read, as a fast server's response arrives. */
class OneRead extends LlmAdapter {
  constructor(private readonly inner: LlmAdapter) {
    super()
  }

  stream(request: AdapterRequest): AsyncIterable<StreamChunk> {
    return this.inner.stream(request)
  }

  override async *streamBatches(request: AdapterRequest): AsyncIterable<readonly StreamChunk[]> {
    const read: StreamChunk[] = []
    for await (const chunk of this.inner.stream(request)) read.push(chunk)
    yield read
  }
}

describe('cancellation', () => {
  it('keeps the text shown before a cancel as an interrupted message without tool calls', async () => {
    const { root } = await boot([[{ text: 'Half an ans' }, { text: 'wer' }, { toolCall: { id: 'c1', name: 'write', arguments: '{"text":"x"}' } }]])
    const probe = probeTools(root)
    const agent = await root.agents.create()
    agent.subscribe((event) => { if (event.type === 'text-delta') agent.cancel('user pressed Ctrl-C') })
    const result = await agent.send('go')
    expect(result.reason).toBe('aborted')
    // The text of the turn's last assistant message, as TurnResult says: the part that was shown.
    expect(result.text).toBe('Half an ans')
    const message = agent.session.events.find((event) => event.type === 'assistant/message')!.data as { interrupted?: true; message: { content: unknown[] } }
    expect(message.interrupted).toBe(true)
    expect(message.message.content).toEqual([{ type: 'text', text: 'Half an ans' }])
    expect(types(agent.session.events).includes('tool/call')).toBe(false)
    expect(probe.log).toEqual([])
    expectValidLog(agent.session.events)
  })

  it('keeps only the text shown before a cancel when the whole answer came in one read', async () => {
    const { root, llm } = await boot([[{ text: 'Half an ans' }, { text: 'wer' }, { toolCall: { id: 'c1', name: 'write', arguments: '{"text":"x"}' } }]])
    root.llm.registerAdapter('one-read', new OneRead(llm))
    const probe = probeTools(root)
    const agent = await root.agents.create({ provider: 'one-read' })
    agent.subscribe((event) => { if (event.type === 'text-delta') agent.cancel('user pressed Ctrl-C') })
    expect((await agent.send('go')).reason).toBe('aborted')
    const message = agent.session.events.find((event) => event.type === 'assistant/message')!.data as { interrupted?: true; message: { content: unknown[] } }
    expect(message.message.content).toEqual([{ type: 'text', text: 'Half an ans' }])
    expect(probe.log).toEqual([])
    expectValidLog(agent.session.events)
  })

  it('stops running tools through their signal and pairs the ones never started', async () => {
    const { root } = await boot([[
      { toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"gate"}' } },
      { toolCall: { id: 'c2', name: 'write', arguments: '{"text":"never"}' } },
    ]])
    const probe = probeTools(root)
    const agent = await root.agents.create()
    const running = agent.send('go')
    await expect.poll(() => probe.log).toEqual(['start gate'])
    agent.cancel('user pressed Ctrl-C')
    const result = await running
    expect(result.reason).toBe('aborted')
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => [(event.data as { callId: string }).callId, (event.data as { code?: string }).code])
    expect(results).toEqual([['c1', 'ABORTED'], ['c2', 'ABORTED_BEFORE_DISPATCH']])
    expect(probe.log).toEqual(['start gate'])
    expectValidLog(agent.session.events)
  })
})

describe('budgets', () => {
  it('ends the turn at maxSteps', async () => {
    const call = (i: number) => [{ toolCall: { id: `c${i}`, name: 'slow_read', arguments: '{"key":"k"}' } }]
    const { root, llm } = await boot([call(1), call(2), call(3)], { agent: { maxSteps: 2 } })
    probeTools(root)
    const agent = await root.agents.create()
    expect(await agent.send('loop')).toMatchObject({ reason: 'budget', error: { code: 'MAX_STEPS', message: 'the turn reached its limit of 2 requests' } })
    expect(llm.requests).toHaveLength(2)
    expectValidLog(agent.session.events)
  })

  it('ends the turn at maxOutputTokens, pairing the calls it will not run', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'write', arguments: '{"text":"x"}' } }, { usage: { inputTokens: 5, outputTokens: 120 } }]], { agent: { maxOutputTokens: 100 } })
    const probe = probeTools(root)
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' } })
    expect(probe.log).toEqual([])
    expect(agent.session.events.find((event) => event.type === 'tool/result')!.data).toMatchObject({ callId: 'c1', isError: true, code: 'BUDGET_EXCEEDED' })
    expectValidLog(agent.session.events)
  })

  it('ends the turn at maxCost, counting cost from the model pricing', async () => {
    const models = [{ id: 'm', pricing: { input: 1_000, output: 1_000 } }]
    const step = [{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"k"}' } }, { usage: { inputTokens: 600, outputTokens: 0 } }]
    const { root } = await boot([step, step], { models, agent: { maxCost: 1 } })
    probeTools(root)
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_COST' } })
    expect(result.cost).toBeCloseTo(1.2)
    expect(agent.session.events.filter((event) => event.type === 'assistant/message').map((event) => (event.data as { cost: number }).cost)).toEqual([0.6, 0.6])
  })

  it('says what a turn stopped at a tiny maxCost cost and its limit in plain decimals, not 0.0000 and 1e-7', async () => {
    const models = [{ id: 'm', pricing: { input: 0.1, output: 0.1 } }]
    const step = [{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"k"}' } }, { usage: { inputTokens: 3, outputTokens: 0 } }]
    const { root } = await boot([step, step], { models, agent: { maxCost: 0.0000001 } })
    probeTools(root)
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_COST' } })
    expect(result.error?.message).toBe('the turn cost 0.00000030, its limit is 0.0000001')
  })

  it('writes the maxCost limit as it was given, and the cost with the digits that show it reached it', async () => {
    const models = [{ id: 'm', pricing: { input: 10, output: 10 } }]
    const step = [{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"k"}' } }, { usage: { inputTokens: 1234, outputTokens: 0 } }]
    const { root } = await boot([step, step], { models, agent: { maxCost: 0.01234 } })
    probeTools(root)
    const agent = await root.agents.create()
    expect((await agent.send('go')).error?.message).toBe('the turn cost 0.01234, its limit is 0.01234')
  })

  it('shows a cost over its maxCost with the digits that show it over, not as the limit itself (0.00132 against 0.0013)', async () => {
    const models = [{ id: 'm', pricing: { input: 1, output: 1 } }]
    const step = [{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"k"}' } }, { usage: { inputTokens: 1320, outputTokens: 0 } }]
    const { root } = await boot([step, step], { models, agent: { maxCost: 0.0013 } })
    probeTools(root)
    const agent = await root.agents.create()
    expect((await agent.send('go')).error?.message).toBe('the turn cost 0.00132, its limit is 0.0013')
  })

  it('refuses maxCost for a model without pricing rather than ignore it', async () => {
    const { root } = await boot([], { agent: { maxCost: 1 } })
    await expect(root.agents.create()).rejects.toMatchObject({ code: 'MAX_COST_UNPRICED' })
  })
})

/** A store whose appends fail while `broken` is set. */
function breakable() {
  const inner = new MemorySessionStore()
  const state = { broken: false }
  const store: SessionStore = {
    create: (header) => inner.create(header),
    open: (id) => inner.open(id),
    flush: (id) => inner.flush(id),
    close: (id) => inner.close(id),
    load: (id) => inner.load(id),
    list: () => inner.list(),
    append: async (id: string, events: readonly SessionEvent[]) => {
      if (state.broken) throw new Error('EIO: i/o error')
      return inner.append(id, events)
    },
  }
  return { store, inner, state }
}

/** A store over the memory one that logs its barriers (`write`, `flush`) in `log`, where the tests' tool bodies log too. */
function barriers() {
  const inner = new MemorySessionStore()
  const log: string[] = []
  const store: SessionStore = {
    create: (header) => inner.create(header),
    open: (id) => inner.open(id),
    append: (id, events) => inner.append(id, events),
    close: (id) => inner.close(id),
    load: (id) => inner.load(id),
    list: () => inner.list(),
    flush: async (id) => { log.push('flush'); await inner.flush(id) },
    write: async (id) => { log.push('write'); await inner.flush(id) },
  }
  return { store, inner, log }
}

describe('durability before side effects', () => {
  it('sends no request when the log cannot be saved', async () => {
    const { store, state } = breakable()
    const { root, llm } = await boot([[{ text: 'never' }]], { store })
    const agent = await root.agents.create()
    state.broken = true
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'SESSION_FLUSH_FAILED' } })
    expect(llm.requests).toHaveLength(0)
  })

  it('before a call that only reads and is replay-safe, writes its intent to the store without the flush; before any other call, flushes', async () => {
    const { store, inner, log } = barriers()
    const { root } = await boot([
      [{ toolCall: { id: 'p1', name: 'peek', arguments: '{}' } }],
      [{ toolCall: { id: 'p2', name: 'peek', arguments: '{}' } }, { toolCall: { id: 's1', name: 'stamp', arguments: '{}' } }],
      [{ toolCall: { id: 'n1', name: 'notify', arguments: '{}' } }],
      [{ text: 'done' }],
    ], { store })
    const tool = (name: string, replaySafe: boolean, effects: ToolEffect[] = []) => defineTool({
      name, description: name, parameters: {}, isConcurrencySafe: true, replaySafe, effects,
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async (_args, run) => {
        const stored = (await inner.load(run.sessionId!)).events.some((event) => event.type === 'tool/call' && (event.data as { callId: string }).callId === run.callId)
        log.push(`${name} ${run.callId}${stored ? '' : ' (intent not in the store)'}`)
        return name
      },
    })
    root.tools.register(tool('peek', true, ['read']))
    root.tools.register(tool('stamp', false))
    // Safe to run twice, but it changes something: a lost record would hide that it did.
    root.tools.register(tool('notify', true, ['network']))
    const agent = await root.agents.create()
    expect((await agent.send('go')).reason).toBe('completed')
    // Each request and the turn's end flush; the batch with an unsafe call flushes, as does the one
    // whose call has an effect; the one that only reads only writes.
    expect(log).toEqual(['flush', 'write', 'peek p1', 'flush', 'flush', 'peek p2', 'stamp s1', 'flush', 'flush', 'notify n1', 'flush', 'flush'])
    expectValidLog(agent.session.events)
  })

  it('sends no retry when the log cannot be saved before it', async () => {
    const { store, state } = breakable()
    const { root, llm } = await boot([[{ fail: { code: 'SERVER', message: 'busy' } as never }], [{ text: 'never' }]], { store })
    const agent = await root.agents.create()
    root.on('session/append', (_session, event) => { if (event.type === 'llm/retry') state.broken = true })
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'SESSION_FLUSH_FAILED' } })
    expect(llm.requests).toHaveLength(1)
  })

  it('runs no tool body when its intent cannot be saved, and pairs the call', async () => {
    const { store, state } = breakable()
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'write', arguments: '{"text":"x"}' } }]], { store })
    const probe = probeTools(root)
    const agent = await root.agents.create()
    root.on('session/append', (_session, event) => { if (event.type === 'tool/call') state.broken = true })
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'SESSION_FLUSH_FAILED' } })
    expect(probe.log).toEqual([])
    expect(agent.session.events.find((event) => event.type === 'tool/result')!.data).toMatchObject({ code: 'TOOL_NOT_STARTED' })
    expectValidLog(agent.session.events)
  })
})

describe('resume', () => {
  async function crashed(root: Context, store: MemorySessionStore) {
    const session = await root.sessions.create({ id: 'crashed', cwd: '/w' })
    const message = assistantMessage([
      { type: 'tool-call', id: 'c1', name: 'slow_read', arguments: '{"key":"r"}' },
      { type: 'tool-call', id: 'c2', name: 'write', arguments: '{"text":"maybe"}' },
      { type: 'tool-call', id: 'c3', name: 'write', arguments: '{"text":"never"}' },
    ], { kind: 'model', provider: 'scripted', model: 'm' })
    session.append('turn/start', { turn: 1 })
    session.append('user/message', { message: userMessage('go') })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { message, provider: 'scripted', model: 'm' })
    session.append('tool/call', { callId: 'c1', name: 'slow_read', arguments: '{"key":"r"}', replaySafe: true })
    session.append('tool/call', { callId: 'c2', name: 'write', arguments: '{"text":"maybe"}', replaySafe: false })
    await session.flush()
    // The process died here: the store still holds its claim until it notices.
    await store.close('crashed')
  }

  it('re-runs a replay-safe call for the run it belonged to, so tools that decide by run decide the same', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'ok' }]], { store })
    const seen: unknown[] = []
    root.tools.register(defineTool({
      name: 'look', description: 'Looks.', parameters: {}, effects: ['read'],
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (_args, run) => { seen.push(run.identity); return 'seen' },
    }))
    const session = await root.sessions.create({ id: 'crashed-run', cwd: '/w' })
    const message = assistantMessage([{ type: 'tool-call', id: 'l1', name: 'look', arguments: '{}' }], { kind: 'model', provider: 'scripted', model: 'm' })
    session.append('turn/start', { turn: 1, runId: 'run_before', turnId: 'crashed-run/1', anchor: 'msg-1' })
    session.append('user/message', { message: userMessage('go') })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { message, provider: 'scripted', model: 'm' })
    session.append('tool/call', { callId: 'l1', name: 'look', arguments: '{}', replaySafe: true })
    await session.flush()
    await store.close('crashed-run')
    const { repaired } = await root.agents.resume('crashed-run')
    expect(repaired.rerun).toEqual([{ callId: 'l1', name: 'look', isError: false }])
    expect(seen).toEqual([{ agent: 'main', sessionId: 'crashed-run', conversationId: 'crashed-run', runId: 'run_before', turnId: 'crashed-run/1', anchor: 'msg-1', depth: 0 }])
  })

  it('repairs a crashed turn: re-runs the replay-safe call once, reports the rest, and goes on', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[{ text: 'I will check what happened.' }]], { store })
    const probe = probeTools(root)
    await crashed(root, store)
    const { agent, repaired } = await root.agents.resume('crashed')
    expect(repaired).toEqual({
      rerun: [{ callId: 'c1', name: 'slow_read', isError: false }],
      recovered: [],
      paired: [{ callId: 'c2', name: 'write', code: 'TOOL_OUTCOME_UNKNOWN' }, { callId: 'c3', name: 'write', code: 'TOOL_NOT_STARTED' }],
      closedTurn: 1,
    })
    expect(probe.log).toEqual(['start r', 'end r'])
    expect(types(agent.session.events).slice(-5)).toEqual(['tool/result', 'tool/result', 'tool/result', 'step/end', 'turn/end'])
    const result = await agent.continue()
    expect(result).toMatchObject({ turn: 2, reason: 'completed', text: 'I will check what happened.' })
    expect(llm.requests[0]!.messages.at(-1)!.content.map((block) => block.type === 'tool-result' && block.isError === true)).toEqual([false, true, true])
    expectValidLog(agent.session.events)
    await agent.close()
    expect((await store.load('crashed')).events).toHaveLength(agent.session.events.length)
  })

  it('spills a re-run result like any other result', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'ok' }]], { store, agent: { spillAfterChars: 500 } })
    root.tools.register(defineTool({ name: 'big_read', description: 'Big.', parameters: {}, output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: () => 'y'.repeat(2_000), replaySafe: true }))
    const session = await root.sessions.create({ id: 'big', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', { message: assistantMessage([{ type: 'tool-call', id: 'b1', name: 'big_read', arguments: '{}' }], { kind: 'model', provider: 'scripted', model: 'm' }), provider: 'scripted', model: 'm' })
    session.append('tool/call', { callId: 'b1', name: 'big_read', arguments: '{}', replaySafe: true })
    await session.flush()
    await store.close('big')
    const { agent } = await root.agents.resume('big')
    expect(agent.session.events.find((event) => event.type === 'tool/result')!.data).toMatchObject({ callId: 'b1', isError: false, spill: { chars: 2_000, lines: 1 } })
  })

  it('leaves a clean log alone', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'a' }]], { store })
    const first = await root.agents.create({ sessionId: 'clean' })
    await first.send('hi')
    await first.close()
    const written = first.session.events.length
    const { agent, repaired } = await root.agents.resume('clean')
    expect(repaired).toEqual({ paired: [], rerun: [], recovered: [] })
    expect(agent.session.events).toHaveLength(written)
  })
})

describe('prompt sections', () => {
  it('orders sections, and logs the system text again only when it changes', async () => {
    const { root, llm } = await boot([[{ text: '1' }], [{ text: '2' }], [{ text: '3' }]])
    let mood = 'calm'
    const fiber = await root.plugin({
      name: 'sections',
      inject: ['agents'],
      apply: (ctx: Context) => {
        ctx.agents.section({ id: 'b-mood', order: 20, render: () => `Mood: ${mood}.` })
        ctx.agents.section({ id: 'a-cwd', order: 20, render: ({ cwd }) => `Workspace: ${cwd}` })
        ctx.agents.section({ id: 'first', order: 10, render: () => 'Rules first.' })
        ctx.agents.section({ id: 'empty', order: 5, render: () => undefined })
      },
    })
    const agent = await root.agents.create({ system: 'You are rein.', cwd: '/w' })
    await agent.send('one')
    await agent.send('two')
    mood = 'busy'
    await agent.send('three')
    expect(llm.requests.map((request) => request.system)).toEqual([
      'You are rein.\n\nRules first.\n\nWorkspace: /w\n\nMood: calm.',
      'You are rein.\n\nRules first.\n\nWorkspace: /w\n\nMood: calm.',
      'You are rein.\n\nRules first.\n\nWorkspace: /w\n\nMood: busy.',
    ])
    const headers = agent.session.events.filter((event) => event.type === 'request/header').map((event) => event.data as { system?: string; tools?: unknown })
    expect(headers).toHaveLength(2)
    expect(headers[1]!.system).toContain('busy')
    expect(headers[1]).not.toHaveProperty('tools')
    await fiber.dispose()
    const bare = await boot([[{ text: 'x' }]])
    expect(() => bare.root.agents.section({ id: 'a', order: 1, render: () => 'x' })).not.toThrow()
  })

  it('removes a plugin\'s sections when it is disposed, and refuses duplicate ids', async () => {
    const { root, llm } = await boot([[{ text: '1' }], [{ text: '2' }]])
    const fiber = await root.plugin({ name: 'p', inject: ['agents'], apply: (ctx: Context) => { ctx.agents.section({ id: 'x', order: 1, render: () => 'From p.' }) } })
    expect(() => root.agents.section({ id: 'x', order: 2, render: () => 'dup' })).toThrow(expect.objectContaining({ code: 'DUPLICATE_SECTION' }))
    const agent = await root.agents.create()
    await agent.send('a')
    await fiber.dispose()
    await agent.send('b')
    expect(llm.requests.map((request) => request.system)).toEqual(['From p.', undefined])
  })

  it('tells the model about tools added mid-session with a new header', async () => {
    const { root, llm } = await boot([[{ text: '1' }], [{ text: '2' }]])
    const agent = await root.agents.create()
    await agent.send('a')
    root.tools.register(defineTool({ name: 'late', description: 'Added later.', parameters: {}, output: { schema: { type: 'null' }, render: () => '' }, execute: () => null }))
    await agent.send('b')
    expect(llm.requests.map((request) => request.tools?.map((tool) => tool.name) ?? [])).toEqual([[], ['late']])
    expect(types(agent.session.events).filter((type) => type === 'request/header')).toHaveLength(2)
  })
})
