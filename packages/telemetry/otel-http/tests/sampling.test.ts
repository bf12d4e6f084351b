// OTEL_TRACES_SAMPLER: which traces go, decided at the root run and kept by every span under it.
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

/** `ROOTS` root runs, each with an attempt and a tool call whose body runs a subagent (its own attempt). */
async function exportTraces() {
  const server = await endpoint()
  const root = new Context()
  const logs = captureLogs(root)
  const telemetry = standInTelemetry(root)
  const fiber = await loadOtelHttp(root, { endpoint: server.url })
  for (let index = 0; index < ROOTS; index++) {
    const parent = scopeOf(`run-${index}`)
    const child = scopeOf(`child-${index}`, { parentRunId: parent.runId, parentCallId: 'call_1', depth: 1 })
    telemetry.emit(
      runStart(parent, T0),
      llmStart(parent, T0 + 1),
      llmEnd(parent, T0 + 1, T0 + 2, { usage: { inputTokens: 10, outputTokens: 2 } }),
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
  return { spans: decodeTraces(server.traces()), metrics: server.metrics(), logs }
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

  it('warns once and exports every trace for a sampler it does not know, or a ratio that is none', async () => {
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'jaeger_remote')
    const unknown = await exportTraces()
    expect(unknown.spans).toHaveLength(ROOTS * SPANS)
    expect(unknown.logs('warn')).toEqual(['OTEL_TRACES_SAMPLER="jaeger_remote" is no sampler rein knows (always_on, always_off, traceidratio, or parentbased_ of them); every trace is exported'])
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'traceidratio')
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '50%')
    const badRatio = await exportTraces()
    expect(badRatio.spans).toHaveLength(ROOTS * SPANS)
    expect(badRatio.logs('warn')).toEqual(['OTEL_TRACES_SAMPLER_ARG="50%" is no ratio from 0 to 1; every trace is exported'])
  })
})
