// Hand-built records to spans, exported to a local endpoint and read back through the official protos.
import { Context } from '@deepseek-ai/cordis'
import type { RunEndRecord } from '@rein/telemetry'
import { describe, expect, it } from 'vitest'
import { decodeHistograms, decodeTraces, type DecodedSpan } from './otlp.ts'
import {
  T0, cost, endpoint, llmEnd, llmStart, loadOtelHttp, nanos, runEnd, runStart, scopeOf, spend, standInTelemetry, toolEnd, toolStart,
} from './harness.ts'

async function setup() {
  const server = await endpoint()
  const root = new Context()
  const telemetry = standInTelemetry(root)
  const fiber = await loadOtelHttp(root, { endpoint: server.url })
  /** Disposes the plugin (which flushes) and decodes every span the endpoint got. */
  const spans = async () => {
    await fiber.dispose()
    return decodeTraces(server.traces())
  }
  return { root, server, telemetry, spans }
}

const byRun = (spans: readonly DecodedSpan[], runId: string) => spans.find((span) => span.name.startsWith('invoke_agent') && span.attributes['rein.run.id'] === runId)!

const byName = (spans: readonly DecodedSpan[], name: string) => {
  const found = spans.filter((span) => span.name === name)
  if (found.length !== 1) throw new Error(`${found.length} spans named ${name}: ${spans.map((span) => span.name).join(', ')}`)
  return found[0]!
}

describe('spans', () => {
  it('names a call to a tool that does not exist _OTHER: the name is the model\'s text, content not to export', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    telemetry.emit(
      runStart(run, T0),
      toolStart(run, T0 + 1, 'the password is hunter2', 'call_x'),
      toolEnd(run, T0 + 1, T0 + 2, 'the password is hunter2', 'call_x', { isError: true, errorCode: 'UNKNOWN_TOOL' }),
      runEnd(run, T0, T0 + 3, cost(spend(undefined))),
    )
    const all = await spans()
    expect(JSON.stringify(all, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toContain('hunter2')
    expect(byName(all, 'execute_tool _OTHER').attributes).toMatchObject({ 'gen_ai.tool.name': '_OTHER', 'error.type': 'UNKNOWN_TOOL' })
  })

  it('marks every execute_tool span gen_ai.tool.type function: rein runs the tools itself (the conventions\' client-side tool)', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    telemetry.emit(
      runStart(run, T0),
      toolStart(run, T0 + 1, 'read', 'call_a'),
      toolEnd(run, T0 + 1, T0 + 2, 'read', 'call_a'),
      toolStart(run, T0 + 3, 'no such tool', 'call_b'),
      toolEnd(run, T0 + 3, T0 + 4, 'no such tool', 'call_b', { isError: true, errorCode: 'UNKNOWN_TOOL' }),
      // A tool call whose end this sink never saw: ended as unfinished at dispose, typed all the same.
      toolStart(run, T0 + 5, 'bash', 'call_c'),
    )
    const all = await spans()
    const tools = all.filter((span) => span.name.startsWith('execute_tool '))
    expect(tools.map((span) => span.name).sort()).toEqual(['execute_tool _OTHER', 'execute_tool bash', 'execute_tool read'])
    for (const span of tools) expect([span.attributes['gen_ai.tool.type'], span.types['gen_ai.tool.type']]).toEqual(['function', 'string'])
    // Only tools have a type: not the run, not a chat.
    for (const span of all.filter((span) => !span.name.startsWith('execute_tool '))) expect(span.attributes).not.toHaveProperty(['gen_ai.tool.type'])
  })

  it('maps a run to invoke_agent over chat per attempt and execute_tool per call, at the records\' times', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    const server = { serverAddress: 'api.deepseek.com', serverPort: 443, maxTokens: 4096, temperature: 0.2 }
    telemetry.emit(
      runStart(run, T0),
      llmStart(run, T0 + 10, server),
      llmEnd(run, T0 + 10, T0 + 20, { ...server, errorCode: 'RATE_LIMIT', finishReason: 'error' }),
      llmStart(run, T0 + 30, { ...server, retry: 1 }),
      llmEnd(run, T0 + 30, T0 + 130, {
        ...server, retry: 1, responseId: 'chatcmpl-1', responseModel: 'deepseek-chat-0324', finishReason: 'tool-calls',
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 50, cacheWriteTokens: 5 }, cost: 0.001,
      }),
      toolStart(run, T0 + 140, 'read', 'call_a'),
      toolStart(run, T0 + 141, 'read', 'call_b'),
      toolEnd(run, T0 + 141, T0 + 170, 'read', 'call_b', { isError: true, errorCode: 'NOT_FOUND' }),
      toolEnd(run, T0 + 140, T0 + 160, 'read', 'call_a'),
      llmStart(run, T0 + 200, { step: 2, route: 'openai', providerName: 'openai', requestModel: 'gpt-5', fallback: 1 }),
      llmEnd(run, T0 + 200, T0 + 300, { step: 2, route: 'openai', providerName: 'openai', requestModel: 'gpt-5', fallback: 1, finishReason: 'stop' }),
      runEnd(run, T0, T0 + 310, cost(spend({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 50, cacheWriteTokens: 5 }, 0.001))),
    )
    const all = await spans()
    expect(all.map((span) => span.name).sort()).toEqual([
      'chat deepseek-chat', 'chat deepseek-chat', 'chat gpt-5', 'execute_tool read', 'execute_tool read', 'invoke_agent main',
    ])
    const agent = byName(all, 'invoke_agent main')
    expect(agent.parentSpanId).toBeUndefined()
    expect(agent).toMatchObject({ kind: 1, startTimeUnixNano: nanos(T0), endTimeUnixNano: nanos(T0 + 310), status: { code: 0 } })
    expect(agent.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'main',
      'gen_ai.conversation.id': 'conv-1',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'rein.run.id': 'run-1',
      'rein.session.id': 's-run-1',
      'rein.run.end_reason': 'completed',
      'rein.usage.total.input_tokens': 155,
      'rein.usage.total.output_tokens': 20,
      'rein.usage.total.cache_read.input_tokens': 50,
      'rein.cost.total': 0.001,
    })
    for (const span of all) expect(span.traceId).toBe(agent.traceId)
    for (const span of all.filter((span) => span !== agent)) expect(span.parentSpanId).toBe(agent.spanId)

    const [failed, retried] = all.filter((span) => span.name === 'chat deepseek-chat').sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano))
    expect(failed).toMatchObject({ kind: 3, startTimeUnixNano: nanos(T0 + 10), endTimeUnixNano: nanos(T0 + 20), status: { code: 2, message: 'RATE_LIMIT' } })
    expect(failed!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'deepseek',
      'gen_ai.request.model': 'deepseek-chat',
      'gen_ai.request.max_tokens': 4096,
      'gen_ai.request.temperature': 0.2,
      'gen_ai.conversation.id': 'conv-1',
      'gen_ai.response.finish_reasons': ['error'],
      'server.address': 'api.deepseek.com',
      'server.port': 443,
      'error.type': 'RATE_LIMIT',
      'rein.llm.route': 'deepseek',
      'rein.llm.retry': 0,
      'rein.llm.fallback': 0,
    })
    expect(retried).toMatchObject({ kind: 3, startTimeUnixNano: nanos(T0 + 30), endTimeUnixNano: nanos(T0 + 130), status: { code: 0 } })
    expect(retried!.attributes).toMatchObject({
      'rein.llm.retry': 1,
      'gen_ai.response.id': 'chatcmpl-1',
      'gen_ai.response.model': 'deepseek-chat-0324',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      // input + cache read + cache write, as the conventions count input.
      'gen_ai.usage.input_tokens': 155,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 50,
    })
    expect(retried!.types).toMatchObject({
      'gen_ai.usage.input_tokens': 'int', 'gen_ai.usage.output_tokens': 'int', 'gen_ai.usage.cache_read.input_tokens': 'int',
      'server.port': 'int', 'gen_ai.request.max_tokens': 'int', 'gen_ai.request.temperature': 'double', 'gen_ai.response.finish_reasons': 'array',
    })

    const fallback = byName(all, 'chat gpt-5')
    expect(fallback.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'rein.llm.route': 'openai', 'rein.llm.fallback': 1, 'gen_ai.response.finish_reasons': ['stop'] })
    // The fallback's provider reported no usage: nothing is written, not 0.
    expect(Object.keys(fallback.attributes).filter((key) => key.includes('usage'))).toEqual([])

    const tools = all.filter((span) => span.name === 'execute_tool read')
    const [a, b] = [tools.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_a')!, tools.find((span) => span.attributes['gen_ai.tool.call.id'] === 'call_b')!]
    expect(a).toMatchObject({ kind: 1, startTimeUnixNano: nanos(T0 + 140), endTimeUnixNano: nanos(T0 + 160), status: { code: 0 } })
    expect(a.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read', 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.id': 'call_a' })
    expect(b).toMatchObject({ status: { code: 2, message: 'NOT_FOUND' } })
    expect(b.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read', 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.id': 'call_b', 'error.type': 'NOT_FOUND' })
    // Every token once: a backend summing gen_ai.usage.* over the trace gets the run's total.
    const summed = all.reduce((sum, span) => sum + Number(span.attributes['gen_ai.usage.input_tokens'] ?? 0), 0)
    expect(summed).toBe(agent.attributes['rein.usage.total.input_tokens'])
  })

  it('nests a subagent\'s invoke_agent under the parent\'s execute_tool span; another root run is another trace', async () => {
    const { telemetry, spans } = await setup()
    const parent = scopeOf('run-p')
    const child = scopeOf('run-c', { parentRunId: 'run-p', parentCallId: 'call_spawn', depth: 1, agentName: 'helper', sessionId: 's-child' })
    const other = scopeOf('run-o', { conversationId: 'conv-2' })
    const childUsage = { inputTokens: 7, outputTokens: 3 }
    const ownUsage = { inputTokens: 10, outputTokens: 2 }
    telemetry.emit(
      runStart(parent, T0),
      llmStart(parent, T0 + 1), llmEnd(parent, T0 + 1, T0 + 2, { usage: ownUsage }),
      toolStart(parent, T0 + 3, 'spawn', 'call_spawn'),
      runStart(child, T0 + 4),
      llmStart(child, T0 + 5), llmEnd(child, T0 + 5, T0 + 6, { usage: childUsage }),
      runEnd(child, T0 + 4, T0 + 7, cost(spend(childUsage))),
      toolEnd(parent, T0 + 3, T0 + 8, 'spawn', 'call_spawn'),
      runEnd(parent, T0, T0 + 9, cost(spend(ownUsage), spend(childUsage), spend({ inputTokens: 17, outputTokens: 5 }))),
      runStart(other, T0 + 20),
      runEnd(other, T0 + 20, T0 + 21, cost(spend(undefined)), { reason: 'error', errorCode: 'AUTH' }),
    )
    const all = await spans()
    const root = byRun(all, 'run-p')
    const spawn = byName(all, 'execute_tool spawn')
    const helper = byName(all, 'invoke_agent helper')
    expect(spawn.parentSpanId).toBe(root.spanId)
    expect(helper.parentSpanId).toBe(spawn.spanId)
    expect(helper.traceId).toBe(root.traceId)
    const childChat = all.find((span) => span.name === 'chat deepseek-chat' && span.parentSpanId === helper.spanId)
    expect(childChat?.attributes['gen_ai.usage.input_tokens']).toBe(7)
    expect(root.attributes).toMatchObject({
      'rein.usage.total.input_tokens': 17, 'rein.usage.total.output_tokens': 5,
      'rein.usage.children.input_tokens': 7, 'rein.usage.children.output_tokens': 3,
    })
    expect(helper.attributes).toMatchObject({ 'gen_ai.agent.name': 'helper', 'rein.session.id': 's-child', 'rein.usage.total.input_tokens': 7 })
    expect(Object.keys(helper.attributes).filter((key) => key.startsWith('rein.usage.children'))).toEqual([])
    // Unpriced: money is unknown, so no cost attribute, and it says so.
    expect(helper.attributes['rein.cost.total']).toBeUndefined()
    expect(helper.attributes['rein.cost.unpriced']).toBe(true)

    const failed = byRun(all, 'run-o')
    expect(failed.traceId).not.toBe(root.traceId)
    expect(failed.parentSpanId).toBeUndefined()
    expect(failed).toMatchObject({ status: { code: 2, message: 'AUTH' } })
    expect(failed.attributes).toMatchObject({ 'error.type': 'AUTH', 'rein.run.end_reason': 'error', 'gen_ai.conversation.id': 'conv-2' })
    // No attempt reported usage: no totals at all, rather than zeros.
    expect(Object.keys(failed.attributes).filter((key) => key.includes('usage'))).toEqual([])
  })
})

// A request a kill cut off, recorded (and told) by the next process's crash repair: its run's span
// died with the killed process, and no run record of it comes here.
describe('an attempt crash repair recorded', () => {
  const estimate = { inputTokens: 300, outputTokens: 0 }
  const repaired = (run: ReturnType<typeof scopeOf>) => llmEnd(run, T0, T0, { repaired: true, usage: estimate, usageEstimated: true, errorCode: 'ABORTED', finishReason: 'aborted' })

  it('is a chat span of no length marked rein.attempt.repaired, in a trace of its own, opening no invoke_agent that would never end', async () => {
    const server = await endpoint()
    const root = new Context()
    const telemetry = standInTelemetry(root)
    const fiber = await loadOtelHttp(root, { endpoint: server.url })
    telemetry.emit(repaired(scopeOf('run-cut')))
    await fiber.dispose()
    const all = decodeTraces(server.traces())
    expect(all.map((span) => span.name)).toEqual(['chat deepseek-chat'])
    const [chat] = all
    expect(chat!.parentSpanId).toBeUndefined()
    expect(chat!.startTimeUnixNano).toBe(nanos(T0))
    expect(chat!.endTimeUnixNano).toBe(nanos(T0))
    expect(chat!.status).toEqual({ code: 2, message: 'ABORTED' })
    expect(chat!.attributes).toMatchObject({
      'rein.attempt.repaired': true, 'rein.run.id': 'run-cut', 'error.type': 'ABORTED',
      'rein.usage.estimated.input_tokens': 300, 'rein.usage.estimated.output_tokens': 0,
    })
    expect(Object.keys(chat!.attributes).filter((key) => key.startsWith('gen_ai.usage.'))).toEqual([])
    // Neither metric: its duration is not known, and an estimate is no reported usage.
    expect(decodeHistograms(server.metrics()).filter((point) => point.metric.startsWith('gen_ai.client.'))).toEqual([])
  })

  it('nests under its run\'s invoke_agent when that run is open here', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    telemetry.emit(runStart(run, T0), repaired(run), runEnd(run, T0, T0 + 5, cost({ ...spend(estimate), estimated: true }), { reason: 'interrupted' }))
    const all = await spans()
    expect(byName(all, 'chat deepseek-chat').parentSpanId).toBe(byRun(all, 'run-1').spanId)
  })
})

describe('how a run or an attempt ended', () => {
  it('exports rein\'s usage estimate under rein.usage.estimated.*, never as gen_ai.usage.* provider usage', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    const estimate = { inputTokens: 300, outputTokens: 40 }
    telemetry.emit(
      runStart(run, T0),
      llmStart(run, T0 + 1), llmEnd(run, T0 + 1, T0 + 2, { finishReason: 'stop', usage: estimate, usageEstimated: true }),
      runEnd(run, T0, T0 + 3, cost({ ...spend(estimate), estimated: true })),
    )
    const all = await spans()
    const chat = byName(all, 'chat deepseek-chat')
    expect(Object.keys(chat.attributes).filter((key) => key.startsWith('gen_ai.usage.'))).toEqual([])
    expect(chat.attributes).toMatchObject({ 'rein.usage.estimated.input_tokens': 300, 'rein.usage.estimated.output_tokens': 40 })
    expect(chat.types).toMatchObject({ 'rein.usage.estimated.input_tokens': 'int', 'rein.usage.estimated.output_tokens': 'int' })
    // The run's totals still count the estimate, and say that some of it is one.
    expect(byName(all, 'invoke_agent main').attributes).toMatchObject({ 'rein.usage.total.input_tokens': 300, 'rein.usage.total.estimated': true })
  })

  it.each<[string, Partial<RunEndRecord>, { code: number; message?: string }, string | undefined]>([
    ['completed', { reason: 'completed' }, { code: 0 }, undefined],
    ['budget (MAX_STEPS)', { reason: 'budget', errorCode: 'MAX_STEPS' }, { code: 0 }, undefined],
    ['max-tokens (MAX_TOKENS)', { reason: 'max-tokens', errorCode: 'MAX_TOKENS' }, { code: 0 }, undefined],
    ['aborted (a person cancelled it)', { reason: 'aborted' }, { code: 0 }, undefined],
    ['interrupted (rein went away under it)', { reason: 'interrupted' }, { code: 2, message: 'interrupted' }, 'interrupted'],
    ['error (AUTH)', { reason: 'error', errorCode: 'AUTH' }, { code: 2, message: 'AUTH' }, 'AUTH'],
    ['error without a code', { reason: 'error' }, { code: 2, message: 'error' }, '_OTHER'],
  ])('marks a run that ended %s as failed only when it is one', async (_label, end, status, errorType) => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    telemetry.emit(runStart(run, T0), runEnd(run, T0, T0 + 1, cost(spend(undefined)), end))
    const agent = byName(await spans(), 'invoke_agent main')
    expect(agent.status).toEqual(status)
    expect(agent.attributes['error.type']).toBe(errorType)
    expect(agent.attributes['rein.run.end_reason']).toBe(end.reason)
    // A limit's code is kept, failure or not.
    expect(agent.attributes['rein.run.end_code']).toBe(end.errorCode)
  })

  it('leaves gen_ai.provider.name off invoke_agent when the run made no attempt (nothing names a provider)', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-1')
    telemetry.emit(runStart(run, T0), runEnd(run, T0, T0 + 1, cost(spend(undefined)), { reason: 'budget', errorCode: 'MAX_COST' }))
    const agent = byName(await spans(), 'invoke_agent main')
    expect(agent.attributes['gen_ai.provider.name']).toBeUndefined()
    expect(agent.attributes['gen_ai.request.model']).toBeUndefined()
  })

  it('exports a repair no turn took as an invoke_agent with rein.run.purpose repair and its children\'s totals, failed when it failed', async () => {
    const { telemetry, spans } = await setup()
    const run = scopeOf('run-repair')
    const children = spend({ inputTokens: 300, outputTokens: 7 }, 0.5)
    telemetry.emit(
      runStart(run, T0, 'repair'),
      runEnd(run, T0, T0 + 1, cost(spend(undefined), children, children), { purpose: 'repair', reason: 'error', errorCode: 'SESSION_FLUSH_FAILED' }),
    )
    const agent = byName(await spans(), 'invoke_agent main')
    expect(agent.attributes).toMatchObject({
      'rein.run.purpose': 'repair', 'rein.run.end_reason': 'error', 'rein.run.end_code': 'SESSION_FLUSH_FAILED',
      'rein.usage.children.input_tokens': 300, 'rein.usage.total.input_tokens': 300, 'rein.cost.children': 0.5,
    })
    expect(agent.status).toMatchObject({ code: 2 })
  })
})

// A repair (a resume after a crash, the next turn after an interrupt) continues a child for the run
// the parent starts next: the child's records name that run (and the call left open), marked
// pending, before the run itself is told — as a repair run at close, or as the turn that takes it.
describe('a child continued by a repair', () => {
  const childOf = (runId: string, parentRunId: string, depth = 1) =>
    scopeOf(runId, { parentRunId, parentCallId: 'c1', parentRunPending: true, depth, agentName: 'helper', sessionId: `s-${runId}` })
  const childRun = (child: ReturnType<typeof scopeOf>, at: number) => [
    runStart(child, at),
    llmStart(child, at + 1), llmEnd(child, at + 1, at + 2, { usage: { inputTokens: 300, outputTokens: 7 } }),
    runEnd(child, at, at + 3, cost(spend({ inputTokens: 300, outputTokens: 7 }))),
  ]

  it('a child continued by a repair nests its spans under the repair run, told after them', async () => {
    const { telemetry, spans } = await setup()
    const repair = scopeOf('run-repair')
    const child = childOf('run-child', 'run-repair')
    const children = spend({ inputTokens: 300, outputTokens: 7 })
    telemetry.emit(
      ...childRun(child, T0 + 1),
      runStart(repair, T0, 'repair'),
      runEnd(repair, T0, T0 + 5, cost(spend(undefined), children, children), { purpose: 'repair' }),
    )
    const all = await spans()
    const parent = byRun(all, 'run-repair')
    const helper = byRun(all, 'run-child')
    expect(parent.parentSpanId).toBeUndefined()
    expect(helper.parentSpanId).toBe(parent.spanId)
    for (const span of all) expect(span.traceId).toBe(parent.traceId)
    expect(byName(all, 'chat deepseek-chat').parentSpanId).toBe(helper.spanId)
  })

  it('nests the continued child under the turn that takes the repair\'s run, and that turn\'s own spans beside it', async () => {
    const { telemetry, spans } = await setup()
    const next = scopeOf('run-next')
    const child = childOf('run-child', 'run-next')
    telemetry.emit(
      ...childRun(child, T0 + 1),
      runStart(next, T0 + 10),
      toolStart(next, T0 + 11, 'read', 'call_r'), toolEnd(next, T0 + 11, T0 + 12, 'read', 'call_r'),
      runEnd(next, T0 + 10, T0 + 13, cost(spend(undefined))),
    )
    const all = await spans()
    const turn = byRun(all, 'run-next')
    expect(turn.parentSpanId).toBeUndefined()
    expect(byRun(all, 'run-child').parentSpanId).toBe(turn.spanId)
    expect(byName(all, 'execute_tool read').parentSpanId).toBe(turn.spanId)
    for (const span of all) expect(span.traceId).toBe(turn.traceId)
  })

  it('keeps a whole chain of repairs in one trace: a grandchild continued by a child a repair continued', async () => {
    const { telemetry, spans } = await setup()
    const repair = scopeOf('run-repair')
    // The child's resume repairs its own log first, continuing the grandchild for the child's next run.
    const child = childOf('run-child', 'run-repair')
    const grandchild = childOf('run-grandchild', 'run-child', 2)
    telemetry.emit(
      ...childRun(grandchild, T0 + 1),
      ...childRun(child, T0 + 5),
      runStart(repair, T0, 'repair'),
      runEnd(repair, T0, T0 + 9, cost(spend(undefined)), { purpose: 'repair' }),
    )
    const all = await spans()
    const root = byRun(all, 'run-repair')
    expect(root.parentSpanId).toBeUndefined()
    expect(byRun(all, 'run-child').parentSpanId).toBe(root.spanId)
    expect(byRun(all, 'run-grandchild').parentSpanId).toBe(byRun(all, 'run-child').spanId)
    for (const span of all) expect(span.traceId).toBe(root.traceId)
  })

  it('nests a grandchild continued by the repair of a child resumed in a live turn under that child, in the live turn\'s trace', async () => {
    const { telemetry, spans } = await setup()
    const root = scopeOf('run-root')
    // `mid` is resumed by the root's call g1; its repair continues `dig` for mid's next run, which g1's turn then is.
    const mid = scopeOf('run-mid', { parentRunId: 'run-root', parentCallId: 'g1', depth: 1, agentName: 'mid', sessionId: 's-mid' })
    const dig = childOf('run-dig', 'run-mid', 2)
    telemetry.emit(
      runStart(root, T0),
      toolStart(root, T0 + 1, 'subagent', 'g1'),
      ...childRun(dig, T0 + 2),
      runStart(mid, T0 + 6), runEnd(mid, T0 + 6, T0 + 7, cost(spend(undefined))),
      toolEnd(root, T0 + 1, T0 + 8, 'subagent', 'g1'),
      runEnd(root, T0, T0 + 9, cost(spend(undefined))),
    )
    const all = await spans()
    const call = byName(all, 'execute_tool subagent')
    expect(byRun(all, 'run-mid').parentSpanId).toBe(call.spanId)
    expect(byRun(all, 'run-dig').parentSpanId).toBe(byRun(all, 'run-mid').spanId)
    for (const span of all) expect(span.traceId).toBe(byRun(all, 'run-root').traceId)
  })

  it('still starts a trace of its own for a child whose parent run already ended here (a background child after its turn)', async () => {
    const { telemetry, spans } = await setup()
    const parent = scopeOf('run-p')
    const child = scopeOf('run-late', { parentRunId: 'run-p', parentCallId: 'c1', depth: 1, agentName: 'helper', sessionId: 's-run-late' })
    telemetry.emit(
      runStart(parent, T0),
      toolStart(parent, T0 + 1, 'subagent', 'c1'), toolEnd(parent, T0 + 1, T0 + 2, 'subagent', 'c1'),
      runEnd(parent, T0, T0 + 3, cost(spend(undefined))),
      ...childRun(child, T0 + 4),
    )
    const all = await spans()
    const late = byRun(all, 'run-late')
    // No parent span id naming a span that will never come: a root, as before.
    expect(late.parentSpanId).toBeUndefined()
    expect(late.traceId).not.toBe(byRun(all, 'run-p').traceId)
  })

  it('starts a trace of its own for a child whose parent run is not pending and never told here (a child session resumed by itself)', async () => {
    const { telemetry, spans } = await setup()
    // Its log names the run of an earlier process that started it; nothing here will start that run.
    const alone = scopeOf('run-alone', { parentRunId: 'run-of-another-process', parentCallId: 'c1', depth: 1, agentName: 'helper', sessionId: 's-alone' })
    telemetry.emit(...childRun(alone, T0))
    const all = await spans()
    expect(byRun(all, 'run-alone').parentSpanId).toBeUndefined()
    for (const span of all) expect(span.traceId).toBe(byRun(all, 'run-alone').traceId)
  })
})
