/**
 * Lifecycle events to records. Content (what the model was asked and answered, tool arguments and
 * results) only goes into `content` functions, which read the event's fields when a sink calls them.
 */

import type {
  CompactionEndEvent, CompactionStartEvent, LlmAttemptEndEvent, LlmAttemptStartEvent, RepairEndEvent, RepairStartEvent, StepEndEvent,
  StepStartEvent, ToolEndEvent, ToolStartEvent, TurnEndEvent, TurnStartEvent,
} from '@rein/agent'
import { scopeOf } from './run-scope.ts'
import type {
  CostReport, LlmCallEndRecord, LlmCallStartRecord, LlmInputContent, RunEndRecord, RunPurpose, RunStartRecord, StepEndRecord,
  StepStartRecord, ToolCallEndRecord, ToolCallStartRecord,
} from './types.ts'

export function runStart(event: TurnStartEvent | CompactionStartEvent | RepairStartEvent, purpose?: RunPurpose): RunStartRecord {
  return Object.freeze({ kind: 'run', phase: 'start', scope: scopeOf(event.identity), startedAt: event.startedAt, ...(purpose ? { purpose } : {}) })
}

export function runEnd(event: TurnEndEvent | CompactionEndEvent | RepairEndEvent, cost: CostReport, purpose?: RunPurpose): RunEndRecord {
  return Object.freeze({
    kind: 'run', phase: 'end', scope: scopeOf(event.identity), startedAt: event.startedAt, endedAt: event.endedAt,
    reason: event.reason,
    ...(event.errorCode !== undefined ? { errorCode: event.errorCode } : {}),
    cost,
    ...(purpose ? { purpose } : {}),
  })
}

export function stepStart(event: StepStartEvent): StepStartRecord {
  return Object.freeze({ kind: 'step', phase: 'start', scope: scopeOf(event.identity), startedAt: event.startedAt, step: event.step })
}

export function stepEnd(event: StepEndEvent): StepEndRecord {
  return Object.freeze({ kind: 'step', phase: 'end', scope: scopeOf(event.identity), startedAt: event.startedAt, step: event.step, endedAt: event.endedAt })
}

/*
 * A record is its shared fields, made by a literal, and then `Object.assign` of the rest: never
 * `{ ...shared(event), more }`, slow on Node 20 (docs/architecture.md, Conventions); these run
 * several times a turn.
 */

/** The fields an attempt's start and end records share. */
function attempt(event: LlmAttemptStartEvent) {
  return {
    kind: 'llm_call' as const,
    scope: scopeOf(event.identity),
    startedAt: event.startedAt,
    step: event.step,
    route: event.route,
    providerName: event.providerName,
    requestModel: event.requestModel,
    ...(event.serverAddress !== undefined ? { serverAddress: event.serverAddress } : {}),
    ...(event.serverPort !== undefined ? { serverPort: event.serverPort } : {}),
    ...(event.maxTokens !== undefined ? { maxTokens: event.maxTokens } : {}),
    ...(event.temperature !== undefined ? { temperature: event.temperature } : {}),
    ...(event.reasoningEffort !== undefined ? { reasoningEffort: event.reasoningEffort } : {}),
    retry: event.retry,
    fallback: event.fallback,
  }
}

function inputContent(input: LlmAttemptStartEvent['input']): LlmInputContent {
  return {
    ...(input.system !== undefined ? { system: input.system } : {}),
    messages: input.messages,
    ...(input.tools !== undefined ? { tools: input.tools } : {}),
  }
}

export function llmStart(event: LlmAttemptStartEvent): LlmCallStartRecord {
  const { input } = event
  return Object.freeze(Object.assign(attempt(event), { phase: 'start' as const, content: () => inputContent(input) }))
}

export function llmEnd(event: LlmAttemptEndEvent): LlmCallEndRecord {
  const { input, output } = event
  const record = Object.assign(attempt(event), {
    phase: 'end' as const,
    endedAt: event.endedAt,
    ...(event.responseId !== undefined ? { responseId: event.responseId } : {}),
    ...(event.responseModel !== undefined ? { responseModel: event.responseModel } : {}),
    ...(event.finishReason !== undefined ? { finishReason: event.finishReason } : {}),
    // A copy: the agent counts the same object after the sinks had it.
    ...(event.usage !== undefined ? { usage: Object.freeze({ ...event.usage }) } : {}),
    ...(event.usageEstimated ? { usageEstimated: true as const } : {}),
    ...(event.reportedUsage !== undefined ? { reportedUsage: Object.freeze({ ...event.reportedUsage }) } : {}),
    ...(event.cost !== undefined ? { cost: event.cost } : {}),
    ...(event.errorCode !== undefined ? { errorCode: event.errorCode } : {}),
    content: () => Object.assign(inputContent(input), output !== undefined ? { output: output() } : {}),
  })
  // Only after a crash: assigned, so the records of every live attempt carry no more keys.
  return Object.freeze(event.repaired === true ? Object.assign(record, { repaired: true as const }) : record)
}

/** The fields a tool call's start and end records share. */
function toolCall(event: ToolStartEvent) {
  return {
    kind: 'tool_call' as const,
    scope: scopeOf(event.identity),
    startedAt: event.startedAt,
    step: event.step,
    toolName: event.name,
    callId: event.callId,
    effects: event.effects,
  }
}

export function toolStart(event: ToolStartEvent): ToolCallStartRecord {
  const { arguments: text } = event
  return Object.freeze(Object.assign(toolCall(event), { phase: 'start' as const, content: () => ({ arguments: text }) }))
}

export function toolEnd(event: ToolEndEvent): ToolCallEndRecord {
  const { arguments: text, result } = event
  return Object.freeze(Object.assign(toolCall(event), {
    phase: 'end' as const,
    endedAt: event.endedAt,
    isError: event.isError,
    ...(event.code !== undefined ? { errorCode: event.code } : {}),
    content: () => ({ arguments: text, result: result() }),
  }))
}
