/**
 * What the tests share: a capture endpoint per test, the plugin loaded on a cordis root (with a
 * stand-in `ctx.telemetry` for hand-built records), log lines, and record builders.
 */

import { Context, type Fiber, type LoggerType } from '@deepseek-ai/cordis'
import type {
  CostReport, LlmCallEndRecord, LlmCallStartRecord, RunEndRecord, RunPurpose, RunScope, Spend, TelemetryRecord, TelemetrySink,
  ToolCallEndRecord, ToolCallStartRecord,
} from '@rein/telemetry'
import { startOtlpCapture, type OtlpCapture, type OtlpCaptureMode } from '@rein/testkit'
import { afterEach } from 'vitest'
import * as otelHttp from '../src/index.ts'

/** What a test may give the plugin's row. */
export type ConfigInput = Parameters<typeof otelHttp.Config>[0]

const servers: OtlpCapture[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** A capture endpoint, closed after the test. */
export async function endpoint(mode?: OtlpCaptureMode): Promise<OtlpCapture> {
  const server = await startOtlpCapture(mode)
  servers.push(server)
  return server
}

/** Loads the plugin on `root` as cordis.yml would; dispose the fiber to take it out. */
export async function loadOtelHttp(root: Context, config: ConfigInput): Promise<Fiber> {
  return await root.plugin(otelHttp, config)
}

/** A `ctx.telemetry` that only keeps sinks, so a test can hand them exactly the records it builds. */
export function standInTelemetry(root: Context) {
  const sinks = new Set<TelemetrySink>()
  root.provide('telemetry', {
    sink(sink: TelemetrySink) {
      sinks.add(sink)
      return async () => { sinks.delete(sink) }
    },
  })
  return {
    sinks,
    emit(...records: TelemetryRecord[]) {
      for (const record of records) for (const sink of sinks) sink.emit(record)
    },
  }
}

/** The plugin's log lines on `root` from now on, formatted (`%s` filled in), warnings and debug included. */
export function captureLogs(root: Context): (type?: LoggerType) => string[] {
  const lines: { type: LoggerType; text: string }[] = []
  root.logger.exporter({
    levels: { default: 3 },
    export: (message) => {
      if (message.name === 'otel-http') lines.push({ type: message.type, text: format(message.args) })
    },
  })
  return (type) => lines.filter((line) => type === undefined || line.type === type).map((line) => line.text)
}

function format(args: readonly unknown[]): string {
  const [template, ...rest] = args
  let index = 0
  return String(template).replace(/%[sdo]/g, () => String(rest[index++]))
}

// Record builders: times are epoch milliseconds from one fixed instant, so spans can be compared exactly.
export const T0 = Date.UTC(2026, 10, 29, 12, 0, 0)

export function scopeOf(runId: string, options: Partial<RunScope> = {}): RunScope {
  return { runId, turnId: `s-${runId}/1`, sessionId: `s-${runId}`, conversationId: 'conv-1', agentName: 'main', depth: 0, ...options }
}

export function runStart(scope: RunScope, at: number, purpose?: RunPurpose): TelemetryRecord {
  return { kind: 'run', phase: 'start', scope, startedAt: at, ...(purpose ? { purpose } : {}) }
}

export function runEnd(scope: RunScope, startedAt: number, endedAt: number, cost: CostReport, extra: Partial<RunEndRecord> = {}): RunEndRecord {
  return { kind: 'run', phase: 'end', scope, startedAt, endedAt, reason: 'completed', cost, ...extra }
}

export function spend(usage: Spend['usage'] | undefined, money?: number): Spend {
  return usage === undefined
    ? { usage: { inputTokens: 0, outputTokens: 0 }, unpriced: false, estimated: false, attempts: 0 }
    : { usage, ...(money !== undefined ? { money } : {}), unpriced: money === undefined, estimated: false, attempts: 1 }
}

export function cost(own: Spend, children: Spend = spend(undefined), total: Spend = own): CostReport {
  return { own, children, total }
}

type Attempt = Omit<LlmCallStartRecord, 'kind' | 'phase' | 'scope' | 'startedAt' | 'content'>

const ATTEMPT: Attempt = { step: 1, route: 'deepseek', providerName: 'deepseek', requestModel: 'deepseek-chat', retry: 0, fallback: 0 }

export function llmStart(scope: RunScope, at: number, attempt: Partial<Attempt> = {}): LlmCallStartRecord {
  return { kind: 'llm_call', phase: 'start', scope, startedAt: at, ...ATTEMPT, ...attempt }
}

export function llmEnd(scope: RunScope, startedAt: number, endedAt: number, fields: Partial<Omit<LlmCallEndRecord, 'kind' | 'phase' | 'scope'>> = {}): LlmCallEndRecord {
  return { kind: 'llm_call', phase: 'end', scope, startedAt, endedAt, ...ATTEMPT, ...fields }
}

export function toolStart(scope: RunScope, at: number, toolName: string, callId: string): ToolCallStartRecord {
  return { kind: 'tool_call', phase: 'start', scope, startedAt: at, step: 1, toolName, callId, effects: [] }
}

export function toolEnd(scope: RunScope, startedAt: number, endedAt: number, toolName: string, callId: string, fields: Partial<ToolCallEndRecord> = {}): ToolCallEndRecord {
  return { kind: 'tool_call', phase: 'end', scope, startedAt, endedAt, step: 1, toolName, callId, effects: [], isError: false, ...fields }
}

/** Nanoseconds since the epoch, as decoded spans carry their times. */
export function nanos(ms: number): bigint {
  return BigInt(ms) * 1_000_000n
}
