// A real agent run through the real ctx.telemetry: the exported tree, content opt-in, no ids in requests.
import { hasListeners } from '@rein/base'
import { describe, expect, it, vi } from 'vitest'
import { decodeTraces, type DecodedSpan } from './otlp.ts'
import { endpoint } from './harness.ts'
import type { AdapterRequest } from '@rein/llm'
import type { ScriptedTurn } from '@rein/testkit'
import { bootStack, call, scripted } from './stack.ts'

const PROMPT = 'Summarize a and b. PROMPT-MARKER'
const KEY = 'sk-KEY-MARKER-0123456789'
const MARKERS = ['PROMPT-MARKER', 'ARG-MARKER', 'RESULT-MARKER']

/** One run: a retry (SERVER, then tools), three parallel tools (one spawns a child), a fallback (AUTH on m, backup answers, no usage). */
const SCRIPT = () => scripted({
  [PROMPT]: {
    0: {
      m: [
        { steps: [{ fail: { code: 'SERVER', message: 'down' } }] },
        [
          call('read', { path: 'ARG-MARKER-a' }, 'call_a'), call('read', { path: 'b' }, 'call_b'), call('spawn', { task: 'child task' }, 'call_spawn'),
          { usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 40 } },
        ],
      ],
    },
    1: {
      m: [{ steps: [{ fail: { code: 'AUTH', message: 'bad key' } }] }],
      backup: [[{ text: 'all done' }]],
    },
  },
  'child task': { 0: { m: [[{ text: 'child done' }, { usage: { inputTokens: 30, outputTokens: 5 } }]] } },
})

async function runOnce(captureContent: boolean) {
  vi.stubEnv('DEEPSEEK_API_KEY', KEY)
  const server = await endpoint()
  const stack = await bootStack(SCRIPT(), { endpoint: server.url, headers: { authorization: `Bearer ${KEY}` }, captureContent })
  const agent = await stack.create()
  const result = await agent.send(PROMPT)
  await stack.otel.dispose()
  return { ...stack, server, agent, result, spans: decodeTraces(server.traces()) }
}

const named = (spans: readonly DecodedSpan[], name: string) => spans.filter((span) => span.name === name)

describe('a real run, exported', () => {
  it('exports the tree: invoke_agent over every attempt and tool call, the child run under its spawn call', async () => {
    const { spans, result, agent } = await runOnce(false)
    expect(result).toMatchObject({ reason: 'completed', text: 'all done' })
    expect(spans.map((span) => span.name).sort()).toEqual([
      'chat backup', 'chat m', 'chat m', 'chat m', 'chat m',
      'execute_tool read', 'execute_tool read', 'execute_tool spawn',
      'invoke_agent helper', 'invoke_agent main',
    ])
    const [main] = named(spans, 'invoke_agent main')
    const [helper] = named(spans, 'invoke_agent helper')
    const [spawn] = named(spans, 'execute_tool spawn')
    expect(main!.parentSpanId).toBeUndefined()
    expect(spawn!.parentSpanId).toBe(main!.spanId)
    expect(helper!.parentSpanId).toBe(spawn!.spanId)
    for (const span of spans) expect(span.traceId).toBe(main!.traceId)
    for (const span of named(spans, 'execute_tool read')) expect(span.parentSpanId).toBe(main!.spanId)
    expect(spans.map((span) => [span.name.split(' ')[0], span.kind]).filter(([, kind]) => kind !== (1 as number))).toEqual(
      Array.from({ length: 5 }, () => ['chat', 3]),
    )

    const mainChats = spans.filter((span) => span.name.startsWith('chat ') && span.parentSpanId === main!.spanId)
    const attempts = mainChats.map((span) => ({
      name: span.name, retry: span.attributes['rein.llm.retry'], fallback: span.attributes['rein.llm.fallback'],
      error: span.attributes['error.type'], status: span.status.code, input: span.attributes['gen_ai.usage.input_tokens'],
      estimated: span.attributes['rein.usage.estimated.input_tokens'],
    })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    expect(attempts).toEqual([
      // The backup reported no usage: rein's estimate is no provider usage, and goes under rein.usage.estimated.*.
      { name: 'chat backup', retry: 0, fallback: 1, error: undefined, status: 0, input: undefined, estimated: expect.any(Number) },
      { name: 'chat m', retry: 0, fallback: 0, error: 'AUTH', status: 2, input: undefined, estimated: undefined },
      { name: 'chat m', retry: 0, fallback: 0, error: 'SERVER', status: 2, input: undefined, estimated: undefined },
      { name: 'chat m', retry: 1, fallback: 0, error: undefined, status: 0, input: 140, estimated: undefined },
    ])
    const [childChat] = spans.filter((span) => span.parentSpanId === helper!.spanId)
    expect(childChat!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 30, 'gen_ai.usage.output_tokens': 5, 'gen_ai.response.finish_reasons': ['stop'] })

    // Usage only on chat spans; the run's totals, children included and marked, under rein.*.
    for (const span of spans.filter((span) => !span.name.startsWith('chat '))) {
      expect(Object.keys(span.attributes).filter((key) => key.startsWith('gen_ai.usage.'))).toEqual([])
    }
    expect(main!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'main', 'gen_ai.conversation.id': agent.session.id,
      'rein.usage.total.cache_read.input_tokens': 40, 'rein.usage.children.input_tokens': 30, 'rein.usage.children.output_tokens': 5,
      'rein.usage.total.estimated': true,
    })
    expect(helper!.attributes).toMatchObject({ 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': agent.session.id, 'rein.usage.total.input_tokens': 30 })
    // Every token once: what the providers reported (gen_ai.usage.*) and rein's estimates
    // (rein.usage.estimated.*), summed over the trace, give the root run's totals.
    const sum = (key: string) => spans.reduce((total, span) => total + Number(span.attributes[key] ?? 0), 0)
    expect(sum('gen_ai.usage.input_tokens') + sum('rein.usage.estimated.input_tokens')).toBe(main!.attributes['rein.usage.total.input_tokens'])
    expect(sum('gen_ai.usage.output_tokens') + sum('rein.usage.estimated.output_tokens')).toBe(main!.attributes['rein.usage.total.output_tokens'])
    expect(main!.types['rein.usage.total.input_tokens']).toBe('int')
    expect(spawn!.attributes).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'spawn', 'gen_ai.tool.type': 'function', 'gen_ai.tool.call.id': 'call_spawn' })
  })

  it('puts no telemetry id (trace, span or run id) into what the model is sent', async () => {
    const { spans, llm } = await runOnce(false)
    const sent = JSON.stringify(llm.requests.map(({ signal: _signal, ...request }) => request))
    const ids = new Set(spans.flatMap((span) => [span.traceId, span.spanId, span.attributes['rein.run.id']]).filter((id): id is string => typeof id === 'string'))
    expect(ids.size).toBeGreaterThan(10)
    for (const id of ids) expect(sent).not.toContain(id)
  })

  it('sends not one byte of content by default, and never the API key', async () => {
    const { server } = await runOnce(false)
    const payloads = server.requests.map((request) => request.body)
    expect(server.traces().length).toBeGreaterThan(0)
    expect(server.metrics().length).toBeGreaterThan(0)
    for (const marker of [...MARKERS, KEY]) expect(payloads.filter((body) => body.includes(marker))).toEqual([])
    // The key travels as the header it was configured as, and only there.
    for (const request of server.requests) expect(request.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  it('sends the prompt, tool arguments and results with captureContent, and still never the API key', async () => {
    const { server, spans } = await runOnce(true)
    const payloads = server.requests.map((request) => request.body).join('\n')
    for (const marker of MARKERS) expect(payloads).toContain(marker)
    expect(payloads).not.toContain(KEY)
    const [read] = spans.filter((span) => span.name === 'execute_tool read' && span.attributes['gen_ai.tool.call.id'] === 'call_a')
    expect(read!.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"path":"ARG-MARKER-a"}', 'gen_ai.tool.call.result': 'contents of ARG-MARKER-a: RESULT-MARKER' })
  })

  it('masks an API key a tool argument, a tool result or a message quotes, even with captureContent', async () => {
    vi.stubEnv('DEEPSEEK_API_KEY', KEY)
    const server = await endpoint()
    const stack = await bootStack(scripted({
      [`use ${KEY}`]: {
        0: { m: [[call('read', { path: `/keys/${KEY}` }, 'call_k'), { usage: { inputTokens: 10, outputTokens: 1 } }]] },
        1: { m: [[{ text: `the key is ${KEY}` }, { usage: { inputTokens: 20, outputTokens: 2 } }]] },
      },
    }), { endpoint: server.url, captureContent: true })
    const agent = await stack.create({ system: `the key: ${KEY}` } as never)
    await agent.send(`use ${KEY}`)
    await stack.otel.dispose()
    const payloads = server.requests.map((request) => request.body).join('\n')
    expect(payloads).toContain('gen_ai.tool.call.arguments')
    expect(payloads).not.toContain(KEY)
    const [read] = decodeTraces(server.traces()).filter((span) => span.name === 'execute_tool read')
    expect(read!.attributes['gen_ai.tool.call.result']).toBe('contents of /keys/***: RESULT-MARKER')
  })

  it('takes its sink off ctx.telemetry when disposed: nothing more is exported', async () => {
    const server = await endpoint()
    const stack = await bootStack(scripted({ hi: { 0: { m: [[{ text: 'one' }]] }, 2: { m: [[{ text: 'two' }]] } } }), { endpoint: server.url })
    const agent = await stack.create()
    await agent.send('hi')
    // ctx.telemetry listens for steps, attempts' starts and tool calls only while a sink is registered.
    expect(hasListeners(stack.root, 'agent/step-start')).toBe(true)
    await stack.otel.dispose()
    expect(hasListeners(stack.root, 'agent/step-start')).toBe(false)
    const exported = server.requests.length
    expect(decodeTraces(server.traces()).map((span) => span.name).sort()).toEqual(['chat m', 'invoke_agent main'])
    await agent.send('hi')
    await stack.root.telemetry.flush()
    expect(server.requests.length).toBe(exported)
  })

  it('exports a compaction between turns (rein compact, /compact) as a run of its own, with its spend', async () => {
    const server = await endpoint()
    const summary = (request: AdapterRequest): ScriptedTurn => request.system?.startsWith('You write the summary')
      ? [{ text: '## Goal\nGo on.' }, { usage: { inputTokens: 700, outputTokens: 40 } }]
      : [{ text: 'ok' }, { usage: { inputTokens: 10, outputTokens: 1 } }]
    const stack = await bootStack(summary, { endpoint: server.url }, [{ id: 'm', contextWindow: 8_000 }])
    const agent = await stack.create()
    // Turns long enough that the summary is shorter than what it replaces (else it is not written).
    for (const text of ['first', 'second', 'third']) await agent.send(`${text} ${'word '.repeat(100)}`)
    expect(await agent.compactNow()).toMatchObject({ summary: { text: expect.stringContaining('Go on.') } })
    await stack.otel.dispose()
    const spans = decodeTraces(server.traces())
    const [compaction, ...others] = named(spans, 'invoke_agent main').filter((span) => span.attributes['rein.run.purpose'] === 'compaction')
    expect(others).toEqual([])
    expect(compaction!.attributes).toMatchObject({ 'rein.run.end_reason': 'completed', 'rein.usage.total.input_tokens': 700, 'rein.usage.total.output_tokens': 40 })
    const chats = spans.filter((span) => span.parentSpanId === compaction!.spanId)
    expect(chats.map((span) => [span.name, span.attributes['gen_ai.usage.input_tokens']])).toEqual([['chat m', 700]])
    expect(stack.root.telemetry.cost(compaction!.attributes['rein.run.id'] as string)?.total.usage).toMatchObject({ inputTokens: 700, outputTokens: 40 })
  })
})
