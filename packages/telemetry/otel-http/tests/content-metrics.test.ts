// Content only with captureContent (in the conventions' message shape), and the two GenAI client metrics.
import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it, vi } from 'vitest'
import { DURATION_BUCKETS, MAX_ATTRIBUTE_CHARS, TOKEN_BUCKETS } from '../src/index.ts'
import { decodeHistograms, decodeTraces } from './otlp.ts'
import { T0, cost, endpoint, llmEnd, llmStart, loadOtelHttp, runEnd, runStart, scopeOf, spend, standInTelemetry, toolEnd, toolStart, type ConfigInput } from './harness.ts'

const INPUT = {
  system: 'You are terse.',
  messages: [
    { id: 'm1', role: 'user', content: [{ type: 'text', text: 'read a' }], source: { kind: 'user' } },
    { id: 'm2', role: 'assistant', content: [{ type: 'reasoning', text: 'thinking' }, { type: 'tool-call', id: 'c1', name: 'read', arguments: '{"path":"a"}' }], source: { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' } },
    { id: 'm3', role: 'user', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'contents of a' }] }], source: { kind: 'tool' } },
  ],
  tools: [{ name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
}
const OUTPUT = [{ type: 'text', text: 'a says hi' }]
const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b))

async function exportOneRun(config: Omit<ConfigInput, 'endpoint'>, tool = { arguments: '{"path":"a"}', result: 'contents of a' }) {
  const server = await endpoint()
  const root = new Context()
  const telemetry = standInTelemetry(root)
  const fiber = await loadOtelHttp(root, { endpoint: server.url, ...config })
  const run = scopeOf('run-1')
  const chatContent = vi.fn<() => typeof INPUT & { output: typeof OUTPUT }>(() => ({ ...INPUT, output: OUTPUT }))
  const toolContent = vi.fn<() => { arguments: string; result: string }>(() => tool)
  const usage = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 50, cacheWriteTokens: 5 }
  telemetry.emit(
    runStart(run, T0),
    llmStart(run, T0 + 1),
    llmEnd(run, T0 + 1, T0 + 21, { errorCode: 'SERVER' }),
    llmStart(run, T0 + 30, { retry: 1 }),
    llmEnd(run, T0 + 30, T0 + 1_530, { retry: 1, finishReason: 'stop', usage, content: chatContent }),
    toolStart(run, T0 + 1_600, 'read', 'c1'),
    toolEnd(run, T0 + 1_600, T0 + 1_700, 'read', 'c1', { content: toolContent }),
    runEnd(run, T0, T0 + 1_800, cost(spend(usage))),
  )
  await fiber.dispose()
  return { server, spans: decodeTraces(server.traces()), chatContent, toolContent }
}

describe('content', () => {
  it('leaves content out by default, without even building it', async () => {
    const { spans, chatContent, toolContent } = await exportOneRun({})
    expect(chatContent).not.toHaveBeenCalled()
    expect(toolContent).not.toHaveBeenCalled()
    const keys = spans.flatMap((span) => Object.keys(span.attributes))
    for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.definitions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']) {
      expect(keys).not.toContain(key)
    }
  })

  it('puts messages, instructions and tool definitions on chat spans and arguments and results on execute_tool spans with captureContent', async () => {
    const { spans } = await exportOneRun({ captureContent: true })
    const chat = spans.find((span) => span.name === 'chat deepseek-chat' && span.attributes['rein.llm.retry'] === 1)!
    const json = (key: string) => JSON.parse(String(chat.attributes[key])) as unknown
    expect(json('gen_ai.system_instructions')).toEqual([{ type: 'text', content: 'You are terse.' }])
    expect(json('gen_ai.input.messages')).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'read a' }] },
      { role: 'assistant', parts: [{ type: 'reasoning', content: 'thinking' }, { type: 'tool_call', id: 'c1', name: 'read', arguments: { path: 'a' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'contents of a' }] },
    ])
    expect(json('gen_ai.tool.definitions')).toEqual([{ type: 'function', ...INPUT.tools[0] }])
    expect(json('gen_ai.output.messages')).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'a says hi' }], finish_reason: 'stop' }])
    const tool = spans.find((span) => span.name === 'execute_tool read')!
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"path":"a"}', 'gen_ai.tool.call.result': 'contents of a' })
  })

  it.each([
    ['tool-calls', 'tool_call'],
    ['max-tokens', 'length'],
    ['stop', 'stop'],
    ['error', 'error'],
  ])('writes the output message\'s finish_reason %s as the v1.41 output-messages schema spells it (%s)', async (reason, expected) => {
    const server = await endpoint()
    const root = new Context()
    const telemetry = standInTelemetry(root)
    const fiber = await loadOtelHttp(root, { endpoint: server.url, captureContent: true })
    const run = scopeOf('run-1')
    const output = reason === 'tool-calls' ? [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{"path":"a"}' }] : OUTPUT
    telemetry.emit(
      runStart(run, T0),
      llmStart(run, T0 + 1),
      llmEnd(run, T0 + 1, T0 + 2, { finishReason: reason, content: () => ({ ...INPUT, output }) }),
      runEnd(run, T0, T0 + 3, cost(spend(undefined))),
    )
    await fiber.dispose()
    const chat = decodeTraces(server.traces()).find((span) => span.name === 'chat deepseek-chat')!
    const [message] = JSON.parse(String(chat.attributes['gen_ai.output.messages'])) as { finish_reason: string }[]
    expect(message!.finish_reason).toBe(expected)
  })

  it('cuts a 1 MB tool result to MAX_ATTRIBUTE_CHARS, so one huge result cannot get the batch refused', async () => {
    const huge = `RESULT-START${'x'.repeat(1024 * 1024)}RESULT-END`
    const { server, spans } = await exportOneRun({ captureContent: true }, { arguments: '{"path":"a"}', result: huge })
    const result = String(spans.find((span) => span.name === 'execute_tool read')!.attributes['gen_ai.tool.call.result'])
    expect(result.length).toBe(MAX_ATTRIBUTE_CHARS)
    expect(result.startsWith('RESULT-START')).toBe(true)
    expect(server.traces().join('').length).toBeLessThan(MAX_ATTRIBUTE_CHARS * 4)
  })

  it('cuts a long result between characters, never through an emoji: half of one is no well-formed text', async () => {
    const result = `${'x'.repeat(MAX_ATTRIBUTE_CHARS - 1)}😀 and more`
    const { spans } = await exportOneRun({ captureContent: true }, { arguments: '{"path":"a"}', result })
    const exported = String(spans.find((span) => span.name === 'execute_tool read')!.attributes['gen_ai.tool.call.result'])
    expect(exported).toBe('x'.repeat(MAX_ATTRIBUTE_CHARS - 1))
    expect(exported).not.toMatch(/[\uD800-\uDBFF]$/)
  })
})

describe('metrics', () => {
  it('records gen_ai.client.operation.duration per attempt and gen_ai.client.token.usage when reported, with the conventions\' buckets', async () => {
    const { server } = await exportOneRun({})
    const points = decodeHistograms(server.metrics())
    const durations = points.filter((point) => point.metric === 'gen_ai.client.operation.duration')
    expect(durations.map((point) => [point.unit, point.count, point.sum, point.attributes['error.type']]).sort(byJson)).toEqual([
      ['s', 1, 0.02, 'SERVER'],
      ['s', 1, 1.5, undefined],
    ])
    for (const point of durations) {
      expect(point.explicitBounds).toEqual(DURATION_BUCKETS)
      expect(point.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'deepseek', 'gen_ai.request.model': 'deepseek-chat' })
    }
    const tokens = points.filter((point) => point.metric === 'gen_ai.client.token.usage')
    // The failed attempt reported no usage: no token points for it at all.
    expect(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.count, point.sum]).sort(byJson)).toEqual([['input', 1, 155], ['output', 1, 20]])
    for (const point of tokens) {
      expect(point.unit).toBe('{token}')
      expect(point.explicitBounds).toEqual(TOKEN_BUCKETS)
      expect(point.types['gen_ai.provider.name']).toBe('string')
    }
  })

  it('records no gen_ai.client.token.usage for rein\'s estimates, and no error.type on token points (v1.41 lists it for the duration only)', async () => {
    const server = await endpoint()
    const root = new Context()
    const telemetry = standInTelemetry(root)
    const fiber = await loadOtelHttp(root, { endpoint: server.url })
    const run = scopeOf('run-1')
    telemetry.emit(
      runStart(run, T0),
      // Failed after the provider had counted the tokens: usage, and an error.
      llmStart(run, T0 + 1), llmEnd(run, T0 + 1, T0 + 11, { errorCode: 'TRANSPORT', usage: { inputTokens: 50, outputTokens: 5 } }),
      // Answered, but the provider said nothing about usage: rein estimated it.
      llmStart(run, T0 + 20, { retry: 1 }), llmEnd(run, T0 + 20, T0 + 30, { retry: 1, finishReason: 'stop', usage: { inputTokens: 70, outputTokens: 7 }, usageEstimated: true }),
      runEnd(run, T0, T0 + 40, cost(spend({ inputTokens: 120, outputTokens: 12 }))),
    )
    await fiber.dispose()
    const points = decodeHistograms(server.metrics())
    const tokens = points.filter((point) => point.metric === 'gen_ai.client.token.usage')
    expect(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.sum]).sort(byJson)).toEqual([['input', 50], ['output', 5]])
    for (const point of tokens) expect(point.attributes).not.toHaveProperty(['error.type'])
    const durations = points.filter((point) => point.metric === 'gen_ai.client.operation.duration')
    expect(durations.map((point) => point.attributes['error.type']).sort(byJson)).toEqual(['TRANSPORT', undefined])
  })

  it('counts what the provider reported of an attempt rein added an estimate to, in gen_ai.client.token.usage and on its span', async () => {
    const server = await endpoint()
    const root = new Context()
    const telemetry = standInTelemetry(root)
    const fiber = await loadOtelHttp(root, { endpoint: server.url })
    const run = scopeOf('run-1')
    // The provider reported the prompt and 3 tokens, then the stream was cut: rein added 100 for the output after.
    const reportedUsage = { inputTokens: 700, outputTokens: 3, cacheReadTokens: 200 }
    const usage = { inputTokens: 700, outputTokens: 103, cacheReadTokens: 200 }
    telemetry.emit(
      runStart(run, T0),
      llmStart(run, T0 + 1), llmEnd(run, T0 + 1, T0 + 11, { errorCode: 'ABORTED', finishReason: 'aborted', usage, usageEstimated: true, reportedUsage }),
      runEnd(run, T0, T0 + 40, cost({ ...spend(usage), estimated: true })),
    )
    await fiber.dispose()
    const tokens = decodeHistograms(server.metrics()).filter((point) => point.metric === 'gen_ai.client.token.usage')
    expect(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.sum]).sort(byJson)).toEqual([['input', 900], ['output', 3]])
    const chat = decodeTraces(server.traces()).find((span) => span.name.startsWith('chat'))!
    // The reported part under gen_ai.usage.*, the estimate added to it under rein.usage.estimated.*: together, what was charged.
    expect(chat.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 900, 'gen_ai.usage.output_tokens': 3, 'gen_ai.usage.cache_read.input_tokens': 200,
      'rein.usage.estimated.output_tokens': 100,
    })
    expect(chat.attributes).not.toHaveProperty(['rein.usage.estimated.input_tokens'])
  })
})
