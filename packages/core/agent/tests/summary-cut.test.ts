// A compaction's summary request cut off by a kill -9: the provider may well have billed it, so the
// next resume (or a repair that only closes the log) records it once, as an estimated, failed
// attempt — whether the compaction ran inside a turn or between turns — never twice, never once it
// completed, and never as well as a step for one request in flight.
import { addMoney } from '@rein/base'
import type { AdapterRequest, ModelInfo } from '@rein/llm'
import { eventData, MemorySessionStore, spending, type CoreEventData, type SessionEvent } from '@rein/session'
import { createScriptedLlm, type ScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import type { Agent, AgentConfigInput, LlmAttemptEndEvent } from '../src/index.ts'
import { boot, dumpTool, expectValidLog, killed } from './fixtures.ts'

const WINDOW = 4_000
const SUMMARY = '## Goal\nKeep going.\n## Decisions\nUse dump.\n## Open tasks\nMore.\n## Notes\nNone.'
/** Per million tokens: the agent's model, and the cheaper one that writes summaries. */
const MODELS: ModelInfo[] = [
  { id: 'm', contextWindow: WINDOW, pricing: { input: 3, output: 15 } },
  { id: 'small', contextWindow: WINDOW, pricing: { input: 2, output: 8 } },
]
const SUMMARY_ROUTE = { provider: 'scripted', model: 'small' }
const COMPACTION = { reserveTokens: 500, summaryMaxTokens: 256, summaryRoute: SUMMARY_ROUTE }

type Attempt = CoreEventData['llm/attempt']

const isSummaryRequest = (request: AdapterRequest) => request.system?.startsWith('You write the summary') === true
const attempts = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
/** Cut off by a kill, as repair records it (the scripted model's answers without usage are estimated too, but not aborted). */
const isCut = (event: SessionEvent) => event.type === 'llm/attempt' && eventData(event, 'llm/attempt').usageEstimated === true && eventData(event, 'llm/attempt').failure?.code === 'ABORTED'
const estimated = (events: readonly SessionEvent[]) => events.filter(isCut).map((event) => eventData(event, 'llm/attempt'))
const marks = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'summary/start').map((event) => eventData(event, 'summary/start'))

/** Each turn: one `dump` call (a 2,000-character result), then a short answer; `refuse` says which requests the provider refuses as too long. */
function dumping(refuse: (request: AdapterRequest) => boolean = () => false, talk = false) {
  return (request: AdapterRequest): ScriptedTurn => {
    if (isSummaryRequest(request)) return [{ text: SUMMARY }, { usage: { inputTokens: 700, outputTokens: 40 } }]
    if (refuse(request)) return [{ fail: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'too long for this model' } as never }]
    if (talk) return [{ text: 'ok' }]
    const last = request.messages.at(-1)!
    return last.source.kind === 'tool' ? [{ text: 'done' }] : [{ toolCall: { id: `d${request.messages.length}`, name: 'dump', arguments: '{"path":"src/big.txt"}' } }]
  }
}

/** `talk`: answers without tools, so a compaction finds nothing to prune. */
async function setUp(options: { store: MemorySessionStore; refuse?: (request: AdapterRequest) => boolean; talk?: boolean; agent?: AgentConfigInput }) {
  const stack = await boot(dumping(options.refuse, options.talk), { models: MODELS, store: options.store, agent: { compaction: COMPACTION as never, ...options.agent } })
  stack.root.tools.register(dumpTool())
  return stack
}

/**
 * From now on the model takes the requests `which` picks and never answers them (until stopped):
 * where a kill -9 finds one. Resolves once the first such request reached it — after the log was
 * made durable for it, so what the store holds then is what the kill leaves.
 */
function stall(llm: ScriptedLlm, which: (request: AdapterRequest) => boolean): Promise<void> {
  const answer = llm.stream.bind(llm)
  return new Promise((sent) => {
    Object.assign(llm, {
      stream: (request: AdapterRequest) => {
        if (!which(request)) return answer(request)
        llm.requests.push(request)
        sent()
        return (async function* () {
          await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }))
          yield* []
        })()
      },
    })
  })
}

/** Sends tasks until one of them sends the stalled request; the turn that did is still running. */
async function sendUntil(agent: Agent, sent: Promise<void>): Promise<{ running: Promise<unknown> }> {
  for (let n = 1; n <= 20; n++) {
    const running = agent.send(`task ${n}`)
    // Wrapped: an async function returning the turn's promise would wait for it.
    if (await Promise.race([running.then(() => false), sent.then(() => true)])) return { running }
  }
  throw new Error('the stalled request was never sent')
}

/** The killed process's agent, stopped so it writes nothing more anywhere (its store is not the one resumed). */
async function stopDead(agent: Agent, running: Promise<unknown>): Promise<void> {
  agent.cancel()
  await running.catch(() => {})
}

/** The summary request a kill cut off, as its repair must record it: failed, estimated from its mark, priced. */
function expectCutSummary(attempt: Attempt | undefined, mark: CoreEventData['summary/start']) {
  expect(attempt).toMatchObject({
    provider: 'scripted', model: 'small', maxTokens: 256, shown: false, usageEstimated: true,
    failure: { code: 'ABORTED', message: expect.stringContaining('summary request') },
    usage: { inputTokens: mark.inputTokens, outputTokens: 0 },
  })
  expect(mark.inputTokens).toBeGreaterThan(0)
  // Priced as the summary route's model: 2 per million input tokens.
  expect(attempt!.cost).toBeCloseTo(mark.inputTokens * 2 / 1_000_000, 12)
}

describe('a summary request cut off by a kill', () => {
  it('is counted once on resume when it was cut off in an auto compaction at a step boundary, however often the session is resumed', async () => {
    const store = new MemorySessionStore()
    // A target far below what pruning reaches: an auto compaction always asks for a summary.
    const { root, llm } = await setUp({ store, agent: { compaction: { ...COMPACTION, target: 0.1 } as never } })
    const agent = await root.agents.create({ sessionId: 'auto' })
    const sent = stall(llm, isSummaryRequest)
    const { running } = await sendUntil(agent, sent)
    const left = await killed(store, 'auto')
    await stopDead(agent, running)
    const { events: dead } = await left.load('auto')
    // A kill mid-turn, between steps: the mark is the last request in flight.
    expect(dead.at(-1)?.type).toBe('summary/start')
    const [mark] = marks(dead)

    const next = await setUp({ store: left })
    const first = await next.root.agents.resume('auto')
    expect(first.repaired.closedTurn).toBeDefined()
    await first.agent.close()
    const second = await next.root.agents.resume('auto')
    await second.agent.close()
    const { events } = await left.load('auto')
    expect(estimated(events)).toHaveLength(1)
    expectCutSummary(estimated(events)[0], mark!)
    expectValidLog(events)
    const spent = spending(events)
    expect(spent.usageEstimated).toBe(true)
    expect(spent.usage.inputTokens).toBe(attempts(events).reduce((sum, attempt) => sum + (attempt.usage?.inputTokens ?? 0), 0))
  })

  it('is the one charged, not the step\'s refused attempt before it, when an overflow compaction\'s summary was in flight', async () => {
    const store = new MemorySessionStore()
    // Manual mode: only the provider's refusal for length compacts, at turn 4's first request.
    let refused = false
    const refuse = (request: AdapterRequest) => {
      const last = request.messages.at(-1)?.content[0]
      if (refused || last?.type !== 'text' || last.text !== 'task 4') return false
      return refused = true
    }
    const { root, llm } = await setUp({ store, refuse, agent: { compaction: { ...COMPACTION, mode: 'manual' } as never } })
    const agent = await root.agents.create({ sessionId: 'overflow' })
    for (let turn = 1; turn <= 3; turn++) expect(await agent.send(`task ${turn}`)).toMatchObject({ reason: 'completed' })
    const sent = stall(llm, isSummaryRequest)
    const running = agent.send('task 4')
    await sent
    const left = await killed(store, 'overflow')
    await stopDead(agent, running)
    const { events: dead } = await left.load('overflow')
    const refusal = attempts(dead).find((attempt) => attempt.failure?.code === 'CONTEXT_WINDOW_EXCEEDED')
    expect(refusal).toMatchObject({ model: 'm' })
    expect(dead.at(-1)?.type).toBe('summary/start')

    const next = await setUp({ store: left })
    await (await next.root.agents.resume('overflow')).agent.close()
    await (await next.root.agents.resume('overflow')).agent.close()
    const { events } = await left.load('overflow')
    expect(estimated(events)).toHaveLength(1)
    expectCutSummary(estimated(events)[0], marks(dead)[0]!)
    // The refusal stays as it was recorded: counted once, not estimated again.
    expect(attempts(events).filter((attempt) => attempt.failure?.code === 'CONTEXT_WINDOW_EXCEEDED')).toEqual([refusal])
    expectValidLog(events)
  })

  it('is counted once when cut off in a compaction between turns (rein compact), by a repair that only closes the log and by resume after it', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await setUp({ store })
    const agent = await root.agents.create({ sessionId: 'idle' })
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    const sent = stall(llm, isSummaryRequest)
    const compacting = agent.compactNow()
    await sent
    const left = await killed(store, 'idle')
    await stopDead(agent, compacting)
    // Bookkeeping of a plugin this process does not load (a background job's), written after the
    // mark: ignorable, so the log loads, and it says nothing about the request.
    const { events: dead } = await left.load('idle')
    await left.append('idle', [{ seq: dead.length, type: 'jobs/seen', time: new Date().toISOString(), data: { jobId: 'j1' }, ignorable: true }])
    expect(dead.at(-1)?.type).toBe('summary/start')
    const before = spending(dead)

    const next = await setUp({ store: left })
    const told: LlmAttemptEndEvent[] = []
    next.root.on('agent/llm-end', (event) => { told.push(event) })
    // What `rein compact` and `ctx.subagents.closeLog` do first, then the agent it compacts with.
    expect(await next.root.agents.repair('idle')).toEqual({ paired: [], rerun: [], recovered: [] })
    await (await next.root.agents.resume('idle')).agent.close()
    await (await next.root.agents.resume('idle')).agent.close()
    const { events } = await left.load('idle')
    const [cut] = estimated(events)
    expect(estimated(events)).toHaveLength(1)
    expectCutSummary(cut, marks(dead)[0]!)
    // Written between turns, where the mark was: `rein sessions` counts it like a finished summary's attempt.
    expect(events.findIndex(isCut)).toBeGreaterThan(events.findLastIndex((event) => event.type === 'turn/end'))
    expect(spending(events)).toEqual({
      usage: { inputTokens: before.usage.inputTokens + cut!.usage!.inputTokens, outputTokens: before.usage.outputTokens },
      // Summed as every total of money is, without floating-point noise.
      cost: addMoney(before.cost!, cut!.cost!),
      usageEstimated: true,
    })
    expect((await next.root.sessions.list()).find((session) => session.id === 'idle')).toMatchObject({ usageEstimated: true, cost: addMoney(before.cost!, cut!.cost!) })
    // Told once too, as a compaction between turns tells its attempts: step 0, numbered with the
    // turn it follows, in a run of its own (the log keeps no id of that run).
    expect(told).toEqual([expect.objectContaining({ repaired: true, usage: cut!.usage, cost: cut!.cost, requestModel: 'small', turn: 3, step: 0 })])
    const turnRuns = events.filter((event) => event.type === 'turn/start').map((event) => eventData(event, 'turn/start').runId)
    expect(turnRuns).not.toContain(told[0]!.identity.runId)
    expect(told[0]!.input.messages).toEqual([])
  })

  it('is not charged again once its attempt was logged: a kill in the next step charges that step alone', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await setUp({ store })
    const agent = await root.agents.create({ sessionId: 'done' })
    for (let turn = 1; turn <= 3; turn++) await agent.send(`task ${turn}`)
    expect((await agent.compactNow())?.summary).toBeDefined()
    const sent = stall(llm, (request) => !isSummaryRequest(request))
    const running = agent.send('task 4')
    await sent
    const left = await killed(store, 'done')
    await stopDead(agent, running)
    const { events: dead } = await left.load('done')
    const summaries = attempts(dead).filter((attempt) => attempt.model === 'small')
    expect(summaries).toEqual([expect.objectContaining({ usage: { inputTokens: 700, outputTokens: 40 } })])

    const next = await setUp({ store: left })
    await (await next.root.agents.resume('done')).agent.close()
    await (await next.root.agents.resume('done')).agent.close()
    const { events } = await left.load('done')
    expect(estimated(events)).toEqual([expect.objectContaining({ model: 'm', failure: expect.objectContaining({ message: expect.not.stringContaining('summary') }) })])
    expect(attempts(events).filter((attempt) => attempt.model === 'small')).toEqual(summaries)
    expectValidLog(events)
  })

  it('is not charged when it never reached a provider: a compaction between turns whose route lost its adapter', async () => {
    const store = new MemorySessionStore()
    const route = { provider: 'gone', model: 'small' }
    const { root } = await setUp({ store, talk: true, agent: { compaction: { ...COMPACTION, summaryRoute: route } as never } })
    const unload = root.llm.registerAdapter('gone', createScriptedLlm([], { models: MODELS }))
    const agent = await root.agents.create({ sessionId: 'unsent' })
    for (let turn = 1; turn <= 3; turn++) await agent.send(`${'words '.repeat(300)}${turn}`)
    await unload()
    // Nothing to prune, the summary failed: the compaction itself writes nothing.
    expect(await agent.compactNow()).toMatchObject({ pruned: [], summaryFailed: { code: 'NO_ADAPTER' } })
    await agent.close()
    await root.agents.repair('unsent')
    const { events } = await store.load('unsent')
    const tail = events.slice(events.findLastIndex((event) => event.type === 'summary/start'))
    expect(tail.map((event) => event.type)).toEqual(['summary/start', 'llm/attempt'])
    expect(eventData(tail[1]!, 'llm/attempt')).toMatchObject({ ...route, failure: { code: 'NO_ADAPTER' } })
    expect(eventData(tail[1]!, 'llm/attempt').usage).toBeUndefined()
    expect(estimated(events)).toEqual([])
  })
})

describe('a plugged-in tokenizer that does not count in whole tokens', () => {
  const cases: [string, (text: string) => number][] = [
    ['in fractions', (text) => text.length / 3.5],
    ['NaN', () => Number.NaN],
    ['below zero', () => -5],
  ]
  for (const [which, isStalled] of [['summary', isSummaryRequest], ['step', (request: AdapterRequest) => !isSummaryRequest(request)]] as const) {
    it.each(cases)(`counting %s still marks and estimates a cut-off ${which} request in whole tokens`, async (_case, tokenizer) => {
      const store = new MemorySessionStore()
      const { root, llm } = await setUp({ store, agent: { compaction: { ...COMPACTION, target: 0.1 } as never } })
      root.agents.tokenizer(tokenizer)
      const agent = await root.agents.create({ sessionId: 'counted' })
      const sent = stall(llm, isStalled)
      const { running } = await sendUntil(agent, sent)
      const left = await killed(store, 'counted')
      await stopDead(agent, running)
      for (const mark of marks((await left.load('counted')).events)) expect(Number.isInteger(mark.inputTokens)).toBe(true)

      const next = await setUp({ store: left })
      next.root.agents.tokenizer(tokenizer)
      const resumed = await next.root.agents.resume('counted')
      await resumed.agent.close()
      const { events } = await left.load('counted')
      expect(estimated(events)).toHaveLength(1)
      expect(Number.isInteger(estimated(events)[0]!.usage!.inputTokens)).toBe(true)
      expectValidLog(events)
    })
  }
})

/** A store that fails, once, to write a batch ending with a `summary/start` (a full disk, say), writing none of it. */
class MarkRefusingStore extends MemorySessionStore {
  refuse = false
  override async append(id: string, events: readonly SessionEvent[]) {
    if (this.refuse && events.at(-1)?.type === 'summary/start') {
      this.refuse = false
      throw new Error('no space left on device')
    }
    return super.append(id, events)
  }
}

describe('a summary request whose mark could not be saved', () => {
  it('is not sent, and not charged later when the mark is saved at close', async () => {
    const store = new MarkRefusingStore()
    const { root, llm } = await setUp({ store })
    const agent = await root.agents.create({ sessionId: 'full' })
    for (let n = 1; n <= 3; n++) await agent.send(`task ${n}`)
    store.refuse = true
    await expect(agent.compactNow()).rejects.toThrow('no space left on device')
    await agent.close()
    await root.agents.repair('full')
    const { events } = await store.load('full')
    expect(llm.requests.filter(isSummaryRequest)).toEqual([])
    expect(estimated(events)).toEqual([])
    expectValidLog(events)
  })
})

describe('a request sent again (a retry), cut off by a kill', () => {
  const busy: ScriptedTurn = [{ fail: { code: 'SERVER', message: 'busy' } as never }]

  /** Resumes session `id` from what the kill left, twice (the second must add nothing), and returns its events. */
  async function resumeTwice(left: MemorySessionStore, id: string) {
    const next = await boot(() => [{ text: 'ok' }], { models: MODELS, store: left })
    for (let n = 0; n < 2; n++) await (await next.root.agents.resume(id)).agent.close()
    return (await left.load(id)).events
  }

  it('is counted once, besides the failed attempt before it, when a step\'s retry was in flight', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot(() => busy, { models: MODELS, store })
    let requests = 0
    const sent = stall(llm, () => requests++ > 0)
    const agent = await root.agents.create({ sessionId: 'retry' })
    const running = agent.send('go')
    await sent
    const left = await killed(store, 'retry')
    await stopDead(agent, running)
    // The failed attempt's record and the retry's mark were made durable before the retry was sent.
    expect((await left.load('retry')).events.slice(-3).map((event) => event.type)).toEqual(['llm/attempt', 'llm/retry', 'llm/resend'])
    const events = await resumeTwice(left, 'retry')
    expect(attempts(events).map((attempt) => [attempt.retry, attempt.failure?.code])).toEqual([[0, 'SERVER'], [1, 'ABORTED']])
    expect(estimated(events)).toEqual([expect.objectContaining({ provider: 'scripted', model: 'm', retry: 1, fallback: 0, usage: { inputTokens: expect.any(Number), outputTokens: 0 } })])
    expect(estimated(events)[0]!.usage!.inputTokens).toBeGreaterThan(0)
    expect(estimated(events)[0]!.failure!.message).toContain('sent again (retry 1, fallback 0)')
    expectValidLog(events)
  })

  it('keeps the usage the server reported for the failed attempt when the kill came during the wait before the retry, and charges nothing more', async () => {
    const store = new MemorySessionStore()
    const wait = { maxRetries: 2, initialDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0, retryAfterCapMs: 0 }
    const reported: ScriptedTurn = { steps: [{ usage: { inputTokens: 100, outputTokens: 5_000 } }], finish: 'error', failure: { code: 'SERVER', message: 'busy' } }
    const { root } = await boot(() => reported, { models: MODELS, store, llm: { retry: wait } })
    const failed = new Promise<void>((resolve) => root.on('llm/attempt', () => resolve()))
    const agent = await root.agents.create({ sessionId: 'waiting' })
    const running = agent.send('go')
    await failed
    await new Promise((resolve) => setImmediate(resolve))
    const left = await killed(store, 'waiting')
    await stopDead(agent, running)
    const events = await resumeTwice(left, 'waiting')
    expect(attempts(events).map((attempt) => [attempt.retry, attempt.failure?.code, attempt.usage])).toEqual([[0, 'SERVER', { inputTokens: 100, outputTokens: 5_000 }]])
    expect(estimated(events)).toEqual([])
    expect(events.some((event) => event.type === 'llm/resend')).toBe(false)
    expectValidLog(events)
  })

  it('keeps the usage reported for a failed summary request when the kill came during the wait before its retry', async () => {
    const store = new MemorySessionStore()
    const wait = { maxRetries: 2, initialDelayMs: 600_000, maxDelayMs: 600_000, jitter: 0, retryAfterCapMs: 0 }
    const reported: ScriptedTurn = { steps: [{ usage: { inputTokens: 300, outputTokens: 40 } }], finish: 'error', failure: { code: 'SERVER', message: 'busy' } }
    const script = dumping()
    const { root } = await boot((request) => (isSummaryRequest(request) ? reported : script(request)), {
      models: MODELS, store, llm: { retry: wait }, agent: { compaction: { ...COMPACTION, target: 0.1 } as never },
    })
    root.tools.register(dumpTool())
    const failed = new Promise<void>((resolve) => root.on('llm/attempt', (attempt) => { if (attempt.failure) resolve() }))
    const agent = await root.agents.create({ sessionId: 'summary-waiting' })
    const { running } = await sendUntil(agent, failed)
    await new Promise((resolve) => setImmediate(resolve))
    const left = await killed(store, 'summary-waiting')
    await stopDead(agent, running)
    const events = await resumeTwice(left, 'summary-waiting')
    expect(attempts(events).filter((attempt) => attempt.failure)).toEqual([expect.objectContaining({ model: 'small', retry: 0, usage: { inputTokens: 300, outputTokens: 40 } })])
    expect(estimated(events)).toEqual([])
    expectValidLog(events)
  })

  it('is counted once when a summary request\'s retry was in flight', async () => {
    const store = new MemorySessionStore()
    let summaries = 0
    const script = dumping()
    const { root, llm } = await boot((request) => (isSummaryRequest(request) && summaries++ === 0 ? busy : script(request)), { models: MODELS, store, agent: { compaction: { ...COMPACTION, target: 0.1 } as never } })
    root.tools.register(dumpTool())
    let stalled = 0
    const sent = stall(llm, (request) => isSummaryRequest(request) && stalled++ > 0)
    const agent = await root.agents.create({ sessionId: 'summary-retry' })
    const { running } = await sendUntil(agent, sent)
    const left = await killed(store, 'summary-retry')
    await stopDead(agent, running)
    const dead = (await left.load('summary-retry')).events
    expect(dead.at(-1)?.type).toBe('llm/resend')
    const [mark] = marks(dead)
    const events = await resumeTwice(left, 'summary-retry')
    expect(estimated(events)).toHaveLength(1)
    expect(estimated(events)[0]).toMatchObject({ provider: 'scripted', model: 'small', retry: 1, maxTokens: 256, usage: { inputTokens: mark!.inputTokens, outputTokens: 0 } })
    expect(estimated(events)[0]!.failure!.message).toContain('summary request was sent again')
    expectValidLog(events)
  })
})

/** Fails, once, to save a batch ending with llm/resend (a full disk for a moment). */
class ResendRefusingStore extends MemorySessionStore {
  refuse = false
  override async append(id: string, events: readonly SessionEvent[]) {
    if (this.refuse && events.at(-1)?.type === 'llm/resend') {
      this.refuse = false
      throw new Error('no space left on device')
    }
    return super.append(id, events)
  }
}

describe('a summary retry whose mark could not be saved (a compaction between turns)', () => {
  it('is not sent, and not charged later: a record without usage closes its mark', async () => {
    const store = new ResendRefusingStore()
    let summaries = 0
    const script = (request: AdapterRequest): ScriptedTurn => {
      if (isSummaryRequest(request)) {
        summaries++
        return summaries === 1 ? [{ fail: { code: 'SERVER', message: 'busy' } as never }] : [{ text: 'summary' }]
      }
      return [{ text: 'ok' }]
    }
    const { root, llm } = await boot(script, { models: MODELS, store, agent: { compaction: COMPACTION as never } })
    const agent = await root.agents.create({ sessionId: 'full' })
    for (let n = 1; n <= 3; n++) await agent.send(`${'words '.repeat(300)}${n}`)
    store.refuse = true
    await agent.compactNow().catch(() => {})
    await agent.close()
    await root.agents.repair('full')
    await (await root.agents.resume('full')).agent.close()
    const { events } = await store.load('full')
    const tail = events.slice(events.findLastIndex((event) => event.type === 'summary/start'))
    expect(tail.map((event) => event.type).slice(-2)).toEqual(['llm/resend', 'llm/attempt'])
    expect(llm.requests.filter(isSummaryRequest)).toHaveLength(1)
    expect(estimated(events)).toEqual([])
    expectValidLog(events)
  })
})
