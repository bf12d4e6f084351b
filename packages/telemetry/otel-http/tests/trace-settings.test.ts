// OTEL_TRACES_SAMPLER (which traces go, decided at the root run and kept by every span under it) and
// the span attribute count limit: what the SDK's tracer read from the environment, read here.
import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { decodeTraces, type DecodedSpan } from './otlp.ts'
import {
  T0, captureLogs, cost, endpoint, llmEnd, llmStart, loadOtelHttp, runEnd, runStart, scopeOf, spend, standInTelemetry, toolEnd, toolStart,
} from './harness.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

const ROOTS = 40
/** invoke_agent, chat and execute_tool of the root run, invoke_agent and chat of its subagent. */
const SPANS = 5

/** `ROOTS` root runs, each with an attempt and a tool call whose body runs a subagent (its own attempt); content is counted as it is read. */
async function exportTraces(captureContent = false) {
  const server = await endpoint()
  const root = new Context()
  const logs = captureLogs(root)
  const telemetry = standInTelemetry(root)
  const fiber = await loadOtelHttp(root, { endpoint: server.url, captureContent })
  let contentReads = 0
  const content = () => {
    contentReads++
    return { messages: [], output: [] }
  }
  for (let index = 0; index < ROOTS; index++) {
    const parent = scopeOf(`run-${index}`)
    const child = scopeOf(`child-${index}`, { parentRunId: parent.runId, parentCallId: 'call_1', depth: 1 })
    telemetry.emit(
      runStart(parent, T0),
      llmStart(parent, T0 + 1),
      llmEnd(parent, T0 + 1, T0 + 2, { usage: { inputTokens: 10, outputTokens: 2 }, content }),
      toolStart(parent, T0 + 3, 'delegate', 'call_1'),
      runStart(child, T0 + 4),
      llmStart(child, T0 + 5),
      llmEnd(child, T0 + 5, T0 + 6, { usage: { inputTokens: 5, outputTokens: 1 } }),
      runEnd(child, T0 + 4, T0 + 7, cost(spend({ inputTokens: 5, outputTokens: 1 }))),
      toolEnd(parent, T0 + 3, T0 + 8, 'delegate', 'call_1'),
      runEnd(parent, T0, T0 + 9, cost(spend({ inputTokens: 10, outputTokens: 2 }))),
    )
  }
  await fiber.dispose()
  return { spans: decodeTraces(server.traces()), metrics: server.metrics(), logs, contentReads }
}

/** Spans by trace id. */
function traces(spans: readonly DecodedSpan[]): Map<string, DecodedSpan[]> {
  const byTrace = new Map<string, DecodedSpan[]>()
  for (const span of spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span])
  return byTrace
}

describe('OTEL_TRACES_SAMPLER', () => {
  it('exports every trace whole when unset (the SDK default, parentbased_always_on)', async () => {
    const { spans } = await exportTraces()
    expect(spans).toHaveLength(ROOTS * SPANS)
    expect([...traces(spans).values()].map((trace) => trace.length)).toEqual(Array(ROOTS).fill(SPANS))
  })

  it.each(['always_off', 'parentbased_always_off', 'ALWAYS_OFF'])('exports no span with %s, and still every metric', async (sampler) => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', sampler)
    const { spans, metrics, logs } = await exportTraces()
    expect(spans).toEqual([])
    expect(metrics.join('')).toContain('gen_ai.client.operation.duration')
    expect(logs('warn')).toEqual([])
  })

  it.each(['traceidratio', 'parentbased_traceidratio'])('keeps or drops each trace whole under %s 0.5: a subagent\'s spans go with its root\'s', async (sampler) => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', sampler)
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '0.5')
    const { spans } = await exportTraces()
    const kept = [...traces(spans).values()]
    // 40 traces at one half: all kept or all dropped has a chance of 2 in 2^40.
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length).toBeLessThan(ROOTS)
    expect(kept.map((trace) => trace.length)).toEqual(Array(kept.length).fill(SPANS))
  })

  it('exports nothing at ratio 0 and everything with no ratio (the spec\'s default, 1)', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'traceidratio')
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '0')
    expect((await exportTraces()).spans).toEqual([])
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '')
    expect((await exportTraces()).spans).toHaveLength(ROOTS * SPANS)
  })

  it('reads a sampler in any case, with spaces around it, and a ratio written as an exponent', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', ' Always_Off ')
    expect((await exportTraces()).spans).toEqual([])
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'TraceIdRatio')
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', ' 0e0 ')
    expect((await exportTraces()).spans).toEqual([])
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '1e0')
    expect((await exportTraces()).spans).toHaveLength(ROOTS * SPANS)
  })

  it('reads no content for a trace it does not export', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'always_off')
    expect((await exportTraces(true)).contentReads).toBe(0)
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'always_on')
    expect((await exportTraces(true)).contentReads).toBe(ROOTS)
  })

  it('says nothing of a sampler when traces are off (OTEL_TRACES_EXPORTER=none)', async () => {
    vi.stubEnv('OTEL_TRACES_EXPORTER', 'none')
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'jaeger_remote')
    const { spans, logs } = await exportTraces()
    expect(spans).toEqual([])
    expect(logs('warn')).toEqual([])
  })

  it('warns once and exports every trace for a sampler it does not know, or a ratio that is none', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'Jaeger_Remote')
    const unknown = await exportTraces()
    expect(unknown.spans).toHaveLength(ROOTS * SPANS)
    expect(unknown.logs('warn')).toEqual(['OTEL_TRACES_SAMPLER="Jaeger_Remote" is no sampler rein knows (always_on, always_off, traceidratio, or parentbased_ of them); every trace is exported'])
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'traceidratio')
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '50%')
    const badRatio = await exportTraces()
    expect(badRatio.spans).toHaveLength(ROOTS * SPANS)
    expect(badRatio.logs('warn')).toEqual(['OTEL_TRACES_SAMPLER_ARG="50%" is no ratio from 0 to 1; every trace is exported'])
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '2')
    expect((await exportTraces()).logs('warn')).toEqual(['OTEL_TRACES_SAMPLER_ARG="2" is no ratio from 0 to 1; every trace is exported'])
  })
})

describe('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT and OTEL_ATTRIBUTE_COUNT_LIMIT', () => {
  it.each(['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'])('keeps at most %s attributes a span and counts the rest dropped', async (variable) => {
    vi.stubEnv(variable, '5')
    const { spans } = await exportTraces()
    expect(spans).toHaveLength(ROOTS * SPANS)
    expect(Math.max(...spans.map((span) => Object.keys(span.attributes).length))).toBe(5)
    const chat = spans.find((span) => span.name.startsWith('chat '))!
    expect(chat.droppedAttributesCount).toBeGreaterThan(0)
    // The first attributes a span gets are kept: what names its operation.
    expect(chat.attributes['gen_ai.operation.name']).toBe('chat')
  })

  it('lets the span variable beat the general one, and warns of a limit that is no whole number (then 128)', async () => {
    vi.stubEnv('OTEL_ATTRIBUTE_COUNT_LIMIT', '3')
    vi.stubEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', '6')
    expect(Math.max(...(await exportTraces()).spans.map((span) => Object.keys(span.attributes).length))).toBe(6)
    vi.stubEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'many')
    const { spans, logs } = await exportTraces()
    expect(spans.every((span) => span.droppedAttributesCount === 0)).toBe(true)
    expect(logs('warn')).toEqual(['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT="many" is no whole number of attributes; spans keep up to 128'])
  })
})
