import type { AdapterRequest, LlmFailure } from '@rein/llm'
import { eventData, type SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { boot, dumpTool, expectValidLog, probeTools } from './fixtures.ts'

const stepRequests = (events: readonly SessionEvent[]) =>
  events.filter((event) => event.type === 'step/start').map((event) => eventData(event, 'step/start').request)
const read = (id: string) => ({ toolCall: { id, name: 'slow_read', arguments: '{"key":"k"}' } })

describe('the output budget shapes each request (issue #8)', () => {
  it('sends maxTokens = min(the model\'s own limit, what the turn has left) and records it at the step', async () => {
    const { root, llm } = await boot([
      [read('c1'), { usage: { inputTokens: 5, outputTokens: 300 } }],
      [{ text: 'done' }, { usage: { inputTokens: 5, outputTokens: 20 } }],
    ], { agent: { maxOutputTokens: 1_000, temperature: 0.2 }, models: [{ id: 'm', maxTokens: 800 }] })
    probeTools(root)
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed' })
    expect(llm.requests.map((request) => request.maxTokens)).toEqual([800, 700])
    expect(stepRequests(agent.session.events)).toEqual([
      { provider: 'scripted', model: 'm', maxTokens: 800, temperature: 0.2 },
      { provider: 'scripted', model: 'm', maxTokens: 700, temperature: 0.2 },
    ])
    expectValidLog(agent.session.events)
  })

  it('gives a fallback model its own output limit, under the turn\'s cap, not the primary\'s', async () => {
    const down: LlmFailure = { code: 'SERVER', message: 'down' }
    const { root, llm } = await boot((request) => request.model === 'big' ? { steps: [{ fail: down }] } : [{ text: 'from small' }], {
      agent: { model: 'big', maxOutputTokens: 10_000, fallbacks: [{ provider: 'scripted', model: 'small' }] },
      models: [{ id: 'big', maxTokens: 32_000 }, { id: 'small', maxTokens: 4_000 }],
    })
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'from small' })
    expect(llm.requests.map((request) => [request.model, request.maxTokens])).toEqual([['big', 10_000], ['big', 10_000], ['big', 10_000], ['small', 4_000]])
    expectValidLog(agent.session.events)
  })

  it('ends the turn as a budget when the budget-capped answer is cut, and as max-tokens when the model\'s own limit cut it', async () => {
    const cut = { steps: [{ text: 'cut off' }, { usage: { inputTokens: 5, outputTokens: 50 } }], finish: 'max-tokens' as const }
    const capped = await boot([cut], { agent: { maxOutputTokens: 50 }, models: [{ id: 'm', maxTokens: 800 }] })
    const one = await capped.root.agents.create()
    expect(await one.send('go')).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' } })
    const own = await boot([cut], { models: [{ id: 'm', maxTokens: 50 }] })
    const two = await own.root.agents.create()
    expect(await two.send('go')).toMatchObject({ reason: 'max-tokens', error: { code: 'MAX_TOKENS' } })
    expectValidLog(one.session.events)
    expectValidLog(two.session.events)
  })
})

describe('a final answer that crosses a budget (issue #8)', () => {
  it('completes the turn and notes the overrun; only further steps are stopped', async () => {
    const { root } = await boot([[{ text: 'the answer' }, { usage: { inputTokens: 5, outputTokens: 120 } }]], { agent: { maxOutputTokens: 100 } })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'the answer', overrun: { code: 'MAX_OUTPUT_TOKENS' } })
    expect(agent.session.events.at(-1)!.data).toMatchObject({ reason: 'completed', overrun: { code: 'MAX_OUTPUT_TOKENS' } })
    expectValidLog(agent.session.events)
  })
})

describe('maxCost after a fallback (issue #8)', () => {
  it('stops with a budget error when a model used turns out to be unpriced, never counting it as free', async () => {
    const down: LlmFailure = { code: 'SERVER', message: 'down' }
    const { root, llm } = await boot((request) => request.model === 'm'
      ? { steps: [{ fail: down }] }
      : [read('c1'), { usage: { inputTokens: 5, outputTokens: 5 } }], {
      agent: { maxCost: 10, fallbacks: [{ provider: 'scripted', model: 'priced-then-not' }] },
      models: [{ id: 'm', pricing: { input: 1, output: 1 } }, { id: 'priced-then-not', pricing: { input: 1, output: 1 } }],
    })
    probeTools(root)
    const agent = await root.agents.create()
    // The catalog changes under a running agent (a provider row reloaded without prices).
    const models = [{ id: 'm', pricing: { input: 1, output: 1 } }, { id: 'priced-then-not' }]
    llm.resolveModel = (_provider, model) => models.find((info) => info.id === model)
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_COST_UNPRICED' } })
    expect(result.cost).toBeUndefined()
    expectValidLog(agent.session.events)
  })
})

describe('attempts (issue #8)', () => {
  it('counts the usage of failed attempts in the turn and logs one record per attempt', async () => {
    const flaky: LlmFailure = { code: 'SERVER', message: 'flaky' }
    const { root } = await boot([
      { steps: [{ text: 'par' }, { usage: { inputTokens: 7, outputTokens: 3 } }], finish: 'error', failure: flaky },
    ], { models: [{ id: 'm', pricing: { input: 1_000_000, output: 1_000_000 } }] })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'error', usage: { inputTokens: 7, outputTokens: 3 }, cost: 10 })
    const attempts = agent.session.events.filter((event) => event.type === 'llm/attempt').map((event) => event.data)
    expect(attempts).toMatchObject([{ provider: 'scripted', model: 'm', retry: 0, fallback: 0, usage: { inputTokens: 7, outputTokens: 3 }, cost: 10, failure: { code: 'SERVER' } }])
    expectValidLog(agent.session.events)
  })
})

describe('retries of one request spend the same budgets', () => {
  const flaky: LlmFailure = { code: 'SERVER', message: 'flaky' }
  const failsAfter = (outputTokens: number) => ({ steps: [{ reasoning: 'thinking' }, { usage: { inputTokens: 10, outputTokens } }], finish: 'error' as const, failure: flaky })

  it('asks each retry for no more output than the failed attempts left, and sends none once they spent it all', async () => {
    const { root, llm } = await boot([failsAfter(60), failsAfter(40), [{ text: 'never asked' }]], {
      agent: { maxOutputTokens: 100 }, models: [{ id: 'm', maxTokens: 800 }],
    })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(llm.requests.map((request) => request.maxTokens)).toEqual([100, 40])
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS' }, usage: { outputTokens: 100 } })
    expectValidLog(agent.session.events)
  })

  it('says a retry cut at the smaller limit the failed attempts left was cut by the budget, not by the model\'s own limit', async () => {
    const cut = { steps: [{ text: 'partial answer' }], finish: 'max-tokens' as const }
    const { root, llm } = await boot([failsAfter(60), cut], { agent: { maxOutputTokens: 100 }, models: [{ id: 'm', maxTokens: 50 }] })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(llm.requests.map((request) => request.maxTokens)).toEqual([50, 40])
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS', message: expect.stringContaining('cut at the 40 output tokens the turn had left') } })
    expectValidLog(agent.session.events)
  })

  it('sends no retry once the failed attempts cost the turn its maxCost', async () => {
    const { root, llm } = await boot([failsAfter(90), failsAfter(90), [{ text: 'never asked' }]], {
      agent: { maxCost: 300 }, models: [{ id: 'm', pricing: { input: 1_000_000, output: 2_000_000 } }],
    })
    const agent = await root.agents.create()
    const result = await agent.send('go')
    // Each failed attempt costs 10 + 2 × 90 = 190: after the second, 380 is past 300.
    expect(llm.requests).toHaveLength(2)
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_COST' }, cost: 380 })
    expectValidLog(agent.session.events)
  })
})

describe('retries of a summary request inside a turn spend the turn\'s budgets too', () => {
  const isSummary = (request: AdapterRequest) => request.system?.startsWith('You write the summary') === true
  const models = [{ id: 'm', contextWindow: 4_000, pricing: { input: 3, output: 15 } }, { id: 'small', contextWindow: 4_000, pricing: { input: 2, output: 8 } }]
  const compaction = { reserveTokens: 500, summaryMaxTokens: 256, summaryRoute: { provider: 'scripted', model: 'small' }, target: 0.1 }

  /** A turn that dumps big tool results until the context needs a summary, whose every attempt fails after `usage`. */
  async function summaryFailsAfter(usage: { inputTokens: number; outputTokens: number }, budget: { maxCost?: number; maxOutputTokens?: number }) {
    const { root, llm } = await boot((request) => {
      if (isSummary(request)) return { steps: [{ reasoning: 'r' }, { usage }], finish: 'error', failure: { code: 'SERVER', message: 'busy' } }
      return request.messages.at(-1)!.source.kind === 'tool' ? [{ text: 'done' }] : [{ toolCall: { id: `d${request.messages.length}`, name: 'dump', arguments: '{"path":"x"}' } }]
    }, { models, agent: { ...budget, compaction: compaction as never } })
    root.tools.register(dumpTool())
    const agent = await root.agents.create()
    for (let n = 0; n < 20 && !llm.requests.some(isSummary); n++) await agent.send(`task ${n}`)
    expectValidLog(agent.session.events)
    return llm.requests.filter(isSummary)
  }

  it('sends no retry of the summary once its failed attempt spent the output budget', async () => {
    expect((await summaryFailsAfter({ inputTokens: 10, outputTokens: 250 }, { maxOutputTokens: 400 })).map((request) => request.maxTokens)).toEqual([256])
  })

  it('sends no retry of the summary once its failed attempt cost the turn its maxCost', async () => {
    expect(await summaryFailsAfter({ inputTokens: 100_000, outputTokens: 100_000 }, { maxCost: 0.05 })).toHaveLength(1)
  })
})

describe('resume reuses what the log recorded (issue #8)', () => {
  it('defaults to the recorded provider, model and options; explicit options still win', async () => {
    const { root } = await boot([[{ text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]], { models: [{ id: 'm' }, { id: 'other' }] })
    const first = await root.agents.create({ model: 'other', temperature: 0.7 })
    await first.send('go')
    await first.close()
    const { agent } = await root.agents.resume(first.session.id)
    expect(agent.options).toMatchObject({ provider: 'scripted', model: 'other', temperature: 0.7 })
    await agent.close()
    const { agent: explicit } = await root.agents.resume(first.session.id, { model: 'm' })
    expect(explicit.options).toMatchObject({ model: 'm', temperature: 0.7 })
    await explicit.close()
  })

  it('drops the recorded reasoning effort when another model is asked for, which may not list it', async () => {
    const { root } = await boot([[{ text: 'one' }]], { models: [{ id: 'm', reasoning: { efforts: ['low', 'high'] } }, { id: 'plain' }] })
    const first = await root.agents.create({ reasoningEffort: 'high' })
    await first.send('go')
    await first.close()
    const { agent } = await root.agents.resume(first.session.id, { model: 'plain' })
    expect(agent.options.model).toBe('plain')
    expect(agent.options.reasoningEffort).toBeUndefined()
    await agent.close()
  })
})

describe('maxCost against floating-point sums', () => {
  it('stops at eight steps of 0.1 for a maxCost of 0.8, not nine (eight 0.1s added in floats are 0.7999999999999999)', async () => {
    let n = 0
    const { root, llm } = await boot(() => [read(`c${++n}`), { usage: { inputTokens: 1, outputTokens: 0 } }], {
      agent: { maxCost: 0.8 },
      models: [{ id: 'm', pricing: { input: 100_000, output: 0 } }],
    })
    probeTools(root)
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'budget', error: { code: 'MAX_COST' }, cost: 0.8 })
    expect(llm.requests).toHaveLength(8)
    expectValidLog(agent.session.events)
  })
})
