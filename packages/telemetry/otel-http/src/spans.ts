/**
 * Records to spans: `invoke_agent` per run, `chat` per provider attempt and `execute_tool` per tool
 * call, each started and ended at the record's own times under an explicit parent. Open spans are
 * kept by run id and call id, so a subagent's run finds the parent's `execute_tool` span it runs in.
 * A repair continues a child for the run its parent starts next, so the child's records come first
 * and name a run not started yet (`parentRunPending`): that run's ids are given out then, and it
 * takes them when it starts.
 */

import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type SpanContext } from '@opentelemetry/api'
import { RandomIdGenerator } from '@opentelemetry/sdk-trace-base'
import type {
  LlmCallEndRecord, LlmCallStartRecord, RunEndRecord, RunScope, TelemetryRecord, ToolCallEndRecord, ToolCallStartRecord,
} from '@rein/telemetry'
import {
  chatEndAttributes, chatStartAttributes, runEndAttributes, runFailed, runStartAttributes, toolEndAttributes, toolStartAttributes,
} from './attributes.ts'
import { chatContentAttributes, toolContentAttributes } from './content.ts'
import type { GenAiMetrics } from './metrics.ts'
import { OpenSpan, type SpanOutput } from './open-span.ts'
import { maskAttributes, type Masker } from './secrets.ts'
import { ATTR, ERROR_OTHER, REIN, spanName } from './semconv.ts'

interface OpenRun {
  span: OpenSpan
  scope: RunScope
  /** Whether the run's first attempt has named its provider and model on the span. */
  named: boolean
}

/** The spans of every run in flight. Not thread-safe, nor does it need to be: records arrive one by one. */
export class SpanBook {
  private readonly runs = new Map<string, OpenRun>()
  private readonly chats = new Map<string, OpenSpan>()
  private readonly tools = new Map<string, OpenSpan>()
  /** The ids of runs not started yet that a child nests under (a repair's next run), by run id. */
  private readonly awaited = new Map<string, SpanContext>()
  private readonly ids = new RandomIdGenerator()

  /**
   * `spans` is undefined when traces are off, `metrics` when metrics are (`OTEL_*_EXPORTER=none`);
   * `mask` is given with `captureContent`: content is exported, with the keys it quotes masked.
   */
  constructor(private readonly spans: SpanOutput | undefined, private readonly metrics: GenAiMetrics | undefined, private readonly mask: Masker | undefined) {}

  /** Starts or ends the record's span. Steps are no span of the conventions: `chat` and `execute_tool` hang off the run. */
  handle(record: TelemetryRecord): void {
    switch (record.kind) {
      case 'run':
        if (record.phase === 'start') this.run(record.scope, record.startedAt)
        else this.endRun(record)
        return
      case 'llm_call':
        if (record.phase === 'start') this.chat(record)
        else this.endChat(record)
        return
      case 'tool_call':
        if (record.phase === 'start') this.tool(record)
        else this.endTool(record)
        return
      case 'step':
        return
      default: {
        // A kind a newer @rein/telemetry adds is skipped, not an error.
        const _unknown: never = record
        return
      }
    }
  }

  /** Ends every span still open (the plugin is going away mid-run) as unfinished, at `now`. */
  endAll(now: number): void {
    for (const span of [...this.tools.values(), ...this.chats.values(), ...[...this.runs.values()].map((run) => run.span)]) {
      span.setAttributes({ [ATTR.errorType]: ERROR_OTHER })
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'not finished when telemetry stopped' })
      span.end(now, this.spans)
    }
    this.tools.clear()
    this.chats.clear()
    this.runs.clear()
    this.awaited.clear()
  }

  /** The run's open span; a run whose start this sink did not see (it came later) starts here. */
  private run(scope: RunScope, startedAt: number): OpenRun {
    const open = this.runs.get(scope.runId)
    if (open) return open
    const awaited = this.awaited.get(scope.runId)
    if (awaited) this.awaited.delete(scope.runId)
    const parent = this.parentOf(scope, awaited)
    // Its children came first and already name these ids; a parent found in another trace wins (see the README).
    const context = awaited && (parent === undefined || parent.traceId === awaited.traceId) ? awaited : this.contextUnder(parent)
    const span = new OpenSpan(spanName.invokeAgent(scope.agentName), SpanKind.INTERNAL, startedAt, runStartAttributes(scope), context, parent, this.attributeLimit)
    const run = { span, scope, named: false }
    this.runs.set(scope.runId, run)
    return run
  }

  /**
   * A subagent's run nests under the parent's `execute_tool` span (else its run); a root run starts
   * a trace, and so does a child whose parent run is not here (it ended, or ran in another process).
   * A parent run a repair works for (`parentRunPending`) starts later: the ids it will take, in the
   * trace it will be in as far as is known now (`awaited`: the asking run is itself awaited).
   */
  private parentOf(scope: RunScope, awaited?: SpanContext): SpanContext | undefined {
    const { parentRunId } = scope
    if (parentRunId === undefined) return undefined
    const parent = (scope.parentCallId !== undefined ? this.tools.get(toolKey(parentRunId, scope.parentCallId)) : undefined)
      ?? this.runs.get(parentRunId)?.span
    if (parent) return parent.context
    if (scope.parentRunPending !== true) return undefined
    let ids = this.awaited.get(parentRunId)
    if (ids === undefined) {
      const trace = awaited ?? this.liveTreeOf(scope)
      ids = trace ? { traceId: trace.traceId, spanId: this.ids.generateSpanId(), traceFlags: trace.traceFlags } : this.contextUnder(undefined)
      this.awaited.set(parentRunId, ids)
      forgetOldest(this.awaited)
    }
    return ids
  }

  /**
   * The trace an awaited subagent parent of `scope` will start in: its own parent's, a run of the
   * conversation open now one level up (a subagent resumed in a live turn). A top-level parent is a
   * root run: a trace of its own, whatever else of the conversation runs.
   */
  private liveTreeOf(scope: RunScope): SpanContext | undefined {
    const depth = scope.depth - 2
    if (depth < 0) return undefined
    for (const run of this.runs.values()) {
      if (run.scope.depth === depth && run.scope.conversationId === scope.conversationId) return run.span.context
    }
    return undefined
  }

  private endRun(record: RunEndRecord): void {
    const { span } = this.run(record.scope, record.startedAt)
    this.runs.delete(record.scope.runId)
    span.setAttributes(runEndAttributes(record))
    if (runFailed(record)) span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode ?? record.reason })
    span.end(record.endedAt, this.spans)
  }

  private chat(record: LlmCallStartRecord | LlmCallEndRecord): OpenSpan {
    const key = chatKey(record)
    const open = this.chats.get(key)
    if (open) return open
    const run = this.run(record.scope, record.startedAt)
    if (!run.named) {
      // The conventions want provider and model on invoke_agent too; the run's first attempt names
      // them. A run that made no attempt names none: the records carry no provider but an attempt's.
      run.span.setAttributes({ [ATTR.providerName]: record.providerName, [ATTR.requestModel]: record.requestModel })
      run.named = true
    }
    const span = this.childOf(run, spanName.chat(record.requestModel), SpanKind.CLIENT, record.startedAt, chatStartAttributes(record))
    this.chats.set(key, span)
    return span
  }

  private endChat(record: LlmCallEndRecord): void {
    if (record.repaired === true) return this.repairedChat(record)
    const span = this.chat(record)
    this.chats.delete(chatKey(record))
    this.finishChat(span, record)
    this.metrics?.recordChat(record)
  }

  /**
   * An attempt crash repair recorded: a request a kill cut off, told by the next process. Its run's
   * span died with the process that ran it and no end of that run comes here, so none is opened for
   * it (it would stay open). A `chat` span of no length: under its run's span if that is open here,
   * else the root of a trace of its own, naming its run. No metric: its duration is not known, and
   * its usage is an estimate, which `gen_ai.client.token.usage` never counts.
   */
  private repairedChat(record: LlmCallEndRecord): void {
    const parent = this.runs.get(record.scope.runId)?.span.context
    const attributes = chatStartAttributes(record)
    attributes[REIN.attemptRepaired] = true
    attributes[REIN.runId] = record.scope.runId
    attributes[REIN.sessionId] = record.scope.sessionId
    const span = new OpenSpan(spanName.chat(record.requestModel), SpanKind.CLIENT, record.startedAt, attributes, this.contextUnder(parent), parent, this.attributeLimit)
    this.finishChat(span, record)
  }

  /** Ends an attempt's span with what its end record says: usage, content (when exported), failure. */
  private finishChat(span: OpenSpan, record: LlmCallEndRecord): void {
    span.setAttributes(chatEndAttributes(record))
    const mask = this.mask
    if (mask && record.content && span.sampled) {
      const content = record.content
      withContent(() => span.setAttributes(maskAttributes(chatContentAttributes(content(), record.finishReason), mask)))
    }
    if (record.errorCode !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode })
    span.end(record.endedAt, this.spans)
  }

  private tool(record: ToolCallStartRecord | ToolCallEndRecord): OpenSpan {
    const key = toolKey(record.scope.runId, record.callId)
    const open = this.tools.get(key)
    if (open) return open
    const run = this.run(record.scope, record.startedAt)
    const span = this.childOf(run, spanName.executeTool(record.toolName), SpanKind.INTERNAL, record.startedAt, toolStartAttributes(record))
    this.tools.set(key, span)
    return span
  }

  /** A span under the run's, started when its record says. */
  private childOf(run: OpenRun, name: string, kind: SpanKind, startedAt: number, attributes: Attributes): OpenSpan {
    const parent = run.span.context
    return new OpenSpan(name, kind, startedAt, attributes, this.contextUnder(parent), parent, this.attributeLimit)
  }

  /** A new span's ids under `parent` (its trace, and its sampling); with none, a new trace, sampled or not. */
  private contextUnder(parent: SpanContext | undefined): SpanContext {
    const spanId = this.ids.generateSpanId()
    if (parent !== undefined) return { traceId: parent.traceId, spanId, traceFlags: parent.traceFlags }
    const traceId = this.ids.generateTraceId()
    return { traceId, spanId, traceFlags: this.spans?.settings.sample(traceId) ? TraceFlags.SAMPLED : TraceFlags.NONE }
  }

  /** With traces off no span is exported, so none keeps an attribute. */
  private get attributeLimit(): number {
    return this.spans?.settings.attributeCountLimit ?? 0
  }

  private endTool(record: ToolCallEndRecord): void {
    const span = this.tool(record)
    this.tools.delete(toolKey(record.scope.runId, record.callId))
    if (record.errorCode === UNKNOWN_TOOL && this.mask === undefined) {
      // No tool has that name: it is the model's own text (content), and would make span names unbounded.
      span.rename(spanName.executeTool(ERROR_OTHER))
      span.setAttributes({ [ATTR.toolName]: ERROR_OTHER })
    }
    span.setAttributes(toolEndAttributes(record))
    const mask = this.mask
    if (mask && record.content && span.sampled) {
      const content = record.content
      withContent(() => span.setAttributes(maskAttributes(toolContentAttributes(content()), mask)))
    }
    if (record.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode ?? ERROR_OTHER })
    span.end(record.endedAt, this.spans)
  }
}

/** The code of a call to a tool no registry holds (@rein/tools). */
const UNKNOWN_TOOL = 'UNKNOWN_TOOL'

/** One attempt: a step's attempts differ by fallback position, route and retry count. */
function chatKey(record: LlmCallStartRecord | LlmCallEndRecord): string {
  return [record.scope.runId, record.step, record.fallback, record.route, record.retry].join('\u0000')
}

/**
 * Awaited runs kept at most: one that never starts here (telemetry went first) must not grow the
 * map for the process's life, so the oldest go first.
 */
const REMEMBERED_RUNS = 1024

/** Drops the oldest run past `REMEMBERED_RUNS` (a Map iterates in insertion order). */
function forgetOldest(runs: Map<string, unknown>): void {
  if (runs.size <= REMEMBERED_RUNS) return
  const oldest = runs.keys().next()
  if (oldest.done !== true) runs.delete(oldest.value)
}

function toolKey(runId: string, callId: string): string {
  return `${runId}\u0000${callId}`
}

/** Content that cannot be built is left out; the span still goes. */
function withContent(add: () => void): void {
  try {
    add()
  } catch {
    // Nothing to report that would not itself be content.
  }
}
