import type { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { LlmAdapter, type AdapterRequest, type StreamChunk } from '@rein/llm'
import SessionService, { MemorySessionStore, type SessionEvent, type SessionHeader } from '@rein/session'
import { createScriptedLlm } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { PromptSection } from '../src/index.ts'
import { boot, expectValidLog, types } from './fixtures.ts'

const NO_RETRY = { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }

/** A tool whose body runs `effect` once: the hook a test uses to swap something between two steps. */
function between(root: Context, effect: () => Promise<void>) {
  root.tools.register(defineTool({
    name: 'swap',
    description: 'Swaps a service.',
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async () => {
      await effect()
      return 'swapped'
    },
  }))
}

/** A tool `hang` that runs until its signal aborts. */
function untilAborted(root: Context) {
  root.tools.register(defineTool({
    name: 'hang', description: 'Runs until it is stopped.', parameters: {},
    output: { schema: { type: 'string' }, render: (_a, v) => v },
    execute: (_args, run) => new Promise<string>((_, reject) => run.signal.addEventListener('abort', () => reject(new Error('stopped')))),
  }))
}

describe('a hot swap between two steps of one turn (issue #8)', () => {
  it('uses the new @rein/llm service and adapter for the next step', async () => {
    const { root, fibers } = await boot([[{ toolCall: { id: 'c1', name: 'swap', arguments: '{}' } }]])
    const second = createScriptedLlm([[{ text: 'from the new llm' }]])
    between(root, async () => {
      await fibers.llm.dispose()
      await root.plugin(LlmRuntime, NO_RETRY)
      root.llm.registerAdapter('scripted', second)
    })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'from the new llm' })
    expect(second.requests).toHaveLength(1)
    expectValidLog(agent.session.events)
  })

  it('uses the new @rein/tools service for the next step', async () => {
    const { root, llm, fibers } = await boot([
      [{ toolCall: { id: 'c1', name: 'swap', arguments: '{}' } }],
      [{ toolCall: { id: 'c2', name: 'fresh', arguments: '{}' } }],
      [{ text: 'done' }],
    ])
    between(root, async () => {
      await fibers.tools.dispose()
      await root.plugin(ToolRegistry)
      root.tools.register(defineTool({ name: 'fresh', description: 'New.', parameters: {}, output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: () => 'fresh ok' }))
    })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'done' })
    expect(llm.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['fresh'])
    expect(agent.session.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { content: { text: string }[] }).content[0]!.text)).toEqual(['swapped', 'fresh ok'])
    expectValidLog(agent.session.events)
  })
})

describe('every turn that starts ends with a recorded outcome, whatever throws (issue #8)', () => {
  const throwing = (where: string) => () => { throw new Error(`${where} broke`) }

  it('when a prompt section throws', async () => {
    const { root } = await boot([[{ text: 'never' }]])
    const section: PromptSection = { id: 'bad', order: 1, render: throwing('the section') }
    root.agents.section(section)
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'error', error: { code: 'INTERNAL_ERROR', message: 'the section broke' } })
    expect(types(agent.session.events).at(-1)).toBe('turn/end')
    expectValidLog(agent.session.events)
  })

  it('when the model catalog throws (it counts as a model without metadata)', async () => {
    const { root, llm } = await boot([[{ text: 'answered' }]])
    llm.resolveModel = throwing('resolveModel')
    const agent = await root.agents.create({ model: 'm' })
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'answered' })
    expectValidLog(agent.session.events)
  })

  it('when the llm service throws instead of streaming', async () => {
    const { root } = await boot([[{ text: 'never' }]])
    const agent = await root.agents.create()
    root.llm.streamBatches = throwing('streamBatches') as never
    expect(await agent.send('go')).toMatchObject({ reason: 'error', error: { message: 'streamBatches broke' } })
    expectValidLog(agent.session.events)
  })

  it('when the tool registry throws while tools run, pairing every call', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'x', arguments: '{}' } }, { toolCall: { id: 'c2', name: 'x', arguments: '{}' } }]])
    const agent = await root.agents.create()
    root.tools.isConcurrencySafe = throwing('isConcurrencySafe')
    expect(await agent.send('go')).toMatchObject({ reason: 'error', error: { message: 'isConcurrencySafe broke' } })
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { code: string }).code)
    expect(results).toEqual(['TOOL_NOT_STARTED', 'TOOL_NOT_STARTED'])
    expectValidLog(agent.session.events)
  })

  it('when the llm service is gone', async () => {
    const { root, fibers } = await boot([[{ text: 'never' }]])
    const agent = await root.agents.create()
    await fibers.llm.dispose()
    expect(await agent.send('go')).toMatchObject({ reason: 'error', error: { code: 'SERVICE_MISSING' } })
    expectValidLog(agent.session.events)
  })
})

describe('disposing the agent service or the composition (issue #8)', () => {
  it('interrupts a running turn, records it, and releases the session', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'hang', arguments: '{}' } }]], { store })
    untilAborted(root)
    const agent = await root.agents.create()
    const running = agent.send('go')
    await expect.poll(() => types(agent.session.events).includes('tool/call')).toBe(true)
    await root.fiber.dispose()
    expect(await running).toMatchObject({ reason: 'interrupted' })
    const stored = await store.load(agent.session.id)
    expect(types(stored.events).slice(-3)).toEqual(['tool/result', 'step/end', 'turn/end'])
    expect(stored.events.at(-1)!.data).toEqual({ turn: 1, reason: 'interrupted' })
    expectValidLog(stored.events)
    // The claim is released: another handle can open it.
    await expect(store.open(agent.session.id)).resolves.toBeDefined()
  })

  it('interrupts a turn waiting on the model when the agents row alone is disposed, and the agent goes on later', async () => {
    let release!: () => void
    const said = (request: { messages: readonly { content: readonly { type: string; text?: string }[] }[] }) => request.messages.at(-1)?.content.map((block) => block.text ?? '').join('')
    const { root, fibers } = await boot((request) => said(request) === 'more' ? [{ text: 'again' }] : [{ text: 'slow' }])
    const agent = await root.agents.create()
    const gate = new Promise<void>((resolve) => { release = resolve })
    const original = root.llm.streamBatches.bind(root.llm)
    root.llm.streamBatches = async function* (request) {
      await Promise.race([gate, new Promise((resolve) => request.signal?.addEventListener('abort', resolve))])
      yield* original(request)
    }
    const running = agent.send('go')
    await expect.poll(() => types(agent.session.events).includes('request/header')).toBe(true)
    await fibers.agents.dispose()
    release()
    expect(await running).toMatchObject({ reason: 'interrupted' })
    expect(agent.session.closed).toBe(true)
    expect(await agent.send('more')).toMatchObject({ reason: 'completed', text: 'again' })
    expectValidLog(agent.session.events)
  })

  it('ends a turn interrupted, not aborted (a cancel), when @rein/llm is stopped under its stream, and keeps the text shown', async () => {
    const { root, fibers } = await boot([[{ text: 'unused' }]])
    class Slow extends LlmAdapter {
      async *stream(request: AdapterRequest): AsyncGenerator<StreamChunk> {
        yield { type: 'block-start', index: 0, blockType: 'text' }
        yield { type: 'text-delta', index: 0, text: 'part ' }
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve))
      }
    }
    root.llm.registerAdapter('slow', new Slow())
    const agent = await root.agents.create({ provider: 'slow' })
    let shown = false
    agent.subscribe((event) => { if (event.type === 'text-delta') shown = true })
    const running = agent.send('go')
    await expect.poll(() => shown).toBe(true)
    await fibers.llm.dispose()
    expect(await running).toMatchObject({ reason: 'interrupted', text: 'part ' })
    expect(agent.session.events.at(-1)!.data).toEqual({ turn: 1, reason: 'interrupted' })
    expectValidLog(agent.session.events)
  })

  it('interrupts a running turn when @rein/session is disposed, and goes on once it is back', async () => {
    const store = new MemorySessionStore()
    const { root, fibers } = await boot([[{ toolCall: { id: 'c1', name: 'hang', arguments: '{}' } }], [{ text: 'back' }]], { store })
    untilAborted(root)
    const agent = await root.agents.create()
    const running = agent.send('go')
    await expect.poll(() => types(agent.session.events).includes('tool/call')).toBe(true)
    await fibers.sessions.dispose()
    expect(await running).toMatchObject({ reason: 'interrupted' })
    expect((await store.load(agent.session.id)).events.at(-1)!.data).toEqual({ turn: 1, reason: 'interrupted' })
    await root.plugin(SessionService)
    expect(await agent.send('again')).toMatchObject({ reason: 'completed', text: 'back' })
    expectValidLog(agent.session.events)
  })

  it('keeps a session going when its store is swapped before its first message', async () => {
    // Like session-jsonl: a created session is stored only by its first append.
    class LazyStore extends MemorySessionStore {
      private readonly pending = new Map<string, SessionHeader>()
      override async create(header: SessionHeader) { this.pending.set(header.id, header) }
      override async append(id: string, events: readonly SessionEvent[]) {
        const header = this.pending.get(id)
        if (header) {
          this.pending.delete(id)
          await super.create(header)
        }
        await super.append(id, events)
      }
      override async close(id: string) { if (!this.pending.has(id)) await super.close(id) }
    }
    const { root } = await boot([[{ text: 'hello' }]], { store: new LazyStore() })
    const agent = await root.agents.create({ cwd: '/w' })
    const first = agent.session
    await first.close()
    expect(await agent.send('first')).toMatchObject({ reason: 'completed', text: 'hello' })
    expect(agent.session.id).toBe(first.id)
    expect(agent.session.header.cwd).toBe('/w')
  })

  it('keeps a session going after its store is swapped between turns', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'one' }], [{ text: 'two' }]], { store: new MemorySessionStore() })
    void store
    const agent = await root.agents.create()
    expect(await agent.send('first')).toMatchObject({ reason: 'completed' })
    const first = agent.session
    await first.close()
    expect(await agent.send('second')).toMatchObject({ reason: 'completed', text: 'two' })
    expect(agent.session).not.toBe(first)
    expectValidLog(agent.session.events)
  })
})

describe('checks before anything is created (issue #8)', () => {
  it('refuses an unknown provider without creating a session', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store })
    await expect(root.agents.create({ provider: 'nope' })).rejects.toMatchObject({ code: 'UNKNOWN_PROVIDER' })
    expect(await store.list()).toEqual([])
  })

  it('refuses a fallback no provider serves, naming it, instead of failing the primary at run time', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store, agent: { fallbacks: [{ provider: 'scripted', model: 'b' }, { provider: 'gone', model: 'x' }] } })
    const error = await root.agents.create().catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'UNKNOWN_PROVIDER', details: { where: 'fallbacks[1]', provider: 'gone' } })
    expect(await store.list()).toEqual([])
  })

  it('refuses maxCost when a fallback model has no pricing', async () => {
    const { root } = await boot([], {
      agent: { maxCost: 1, fallbacks: [{ provider: 'scripted', model: 'free' }] },
      models: [{ id: 'm', pricing: { input: 1, output: 1 } }, { id: 'free' }],
    })
    await expect(root.agents.create()).rejects.toMatchObject({ code: 'MAX_COST_UNPRICED', details: { where: 'fallbacks[0]' } })
  })

  it('refuses a subagent on an unpriced model under its parent\'s maxCost before it sends anything', async () => {
    // The parent's own maxCost (rein run --max-cost), not the row's: the child inherits what is left of it.
    const { root, llm } = await boot([[{ toolCall: { id: 'c1', name: 'spawn', arguments: '{}' } }], [{ text: 'parent done' }]], {
      models: [{ id: 'm', pricing: { input: 1, output: 1 } }, { id: 'free' }],
    })
    let refused: unknown
    root.tools.register(defineTool({
      name: 'spawn', description: 'starts a child', parameters: {}, effects: [],
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async (_input, run) => {
        refused = await root.agents.create({ model: 'free', parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } }).catch((error: unknown) => error)
        return 'refused'
      },
    }))
    await (await root.agents.create({ maxCost: 1 })).send('go')
    expect(refused).toMatchObject({ code: 'MAX_COST_UNPRICED' })
    // Only the parent's two requests went out.
    expect(llm.requests).toHaveLength(2)
  })

  it('refuses a compaction summaryRoute no provider serves, instead of finding out when the context fills', async () => {
    const { root } = await boot([], { agent: { compaction: { summaryRoute: { provider: 'opnai', model: 'm' } } } })
    await expect(root.agents.create()).rejects.toMatchObject({ code: 'UNKNOWN_PROVIDER', details: { where: 'compaction.summaryRoute', provider: 'opnai' } })
  })

  it('refuses maxCost when the compaction summaryRoute model has no pricing, and checks no summaryRoute while compaction is off', async () => {
    const models = [{ id: 'm', pricing: { input: 1, output: 1 } }, { id: 'free' }]
    const { root } = await boot([], { agent: { maxCost: 1, compaction: { summaryRoute: { provider: 'scripted', model: 'free' } } }, models })
    await expect(root.agents.create()).rejects.toMatchObject({ code: 'MAX_COST_UNPRICED', details: { where: 'compaction.summaryRoute' } })
    const off = await boot([], { agent: { compaction: { mode: 'off', summaryRoute: { provider: 'opnai', model: 'm' } } } })
    await expect(off.root.agents.create()).resolves.toBeDefined()
  })

  it('refuses an auto compaction whose target is not below its threshold, as the row loads and from a caller: it would never summarize', async () => {
    const said = 'compaction.target (0.8) must be below compaction.threshold (0.5): a compaction starts at the threshold and brings the request down to the target'
    const loaded = await boot([], { agent: { compaction: { threshold: 0.5, target: 0.8 } } }).catch((caught: unknown) => caught)
    expect((loaded as Error).message).toContain(said)
    const { root } = await boot([])
    const error = await root.agents.create({ compaction: { mode: 'auto', threshold: 0.5, target: 0.8, reserveTokens: 8192, keepToolTokens: 40_000, keepTurns: 2, summaryMaxTokens: 2048 } }).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(said) })
    const manual = await boot([], { agent: { compaction: { mode: 'manual', threshold: 0.5, target: 0.8 } } })
    await expect(manual.root.agents.create()).resolves.toBeDefined()
  })

  it('refuses a reasoning effort the model does not list', async () => {
    const { root } = await boot([], { models: [{ id: 'm', reasoning: { efforts: ['low', 'high'] } }] })
    await expect(root.agents.create({ reasoningEffort: 'max' })).rejects.toMatchObject({ code: 'UNSUPPORTED_REASONING_EFFORT' })
  })
})

describe('tool-call ids (issue #8)', () => {
  it('are unique within the session even when a server repeats them', async () => {
    const same = [{ toolCall: { id: 'call_0', name: 'x', arguments: '{}' } }]
    const { root, llm } = await boot([same, [...same, { toolCall: { id: 'call_0', name: 'x', arguments: '{}' } }], [{ text: 'ok' }]])
    const agent = await root.agents.create()
    await agent.send('go')
    const ids = agent.session.events.filter((event) => event.type === 'tool/call').map((event) => (event.data as { callId: string }).callId)
    expect(ids).toHaveLength(3)
    expect(new Set(ids).size).toBe(3)
    expect(ids[0]).toBe('call_0')
    // What the model is sent agrees with the log.
    const sent = llm.requests[2]!.messages.flatMap((message) => message.content.filter((block) => block.type === 'tool-call').map((block) => (block as { id: string }).id))
    expect(sent).toEqual(ids)
    expectValidLog(agent.session.events)
  })
})

describe('keeping the process alive (issue #8)', () => {
  it('holds a ref\'d handle while a turn runs and none after', async () => {
    const { root } = await boot([[{ text: 'hi' }]])
    const agent = await root.agents.create()
    const before = process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length
    const running = agent.send('go')
    expect(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length).toBe(before + 1)
    await running
    expect(process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length).toBe(before)
  })
})

