/**
 * Records to span and metric attributes, as pure functions. Usage goes on `chat` spans only and only
 * when reported; a run's totals (children included) go on its `invoke_agent` span under `rein.*`.
 */

import type { Attributes } from '@opentelemetry/api'
import type { LlmCallEndRecord, LlmCallStartRecord, RunEndRecord, RunScope, Spend, ToolCallEndRecord, ToolCallStartRecord } from '@rein/telemetry'
import { ATTR, ERROR_OTHER, OPERATION, REIN } from './semconv.ts'

type Usage = NonNullable<LlmCallEndRecord['usage']>

/** Input as the conventions count it: full-price input plus cache reads and cache writes. */
export function conventionInputTokens(usage: Usage): number {
  return int(usage.inputTokens) + int(usage.cacheReadTokens ?? 0) + int(usage.cacheWriteTokens ?? 0)
}

/** Known at a run's start: what `invoke_agent` is for. */
export function runStartAttributes(scope: RunScope): Attributes {
  return {
    [ATTR.operationName]: OPERATION.invokeAgent,
    [ATTR.agentName]: scope.agentName,
    [ATTR.conversationId]: scope.conversationId,
    [REIN.runId]: scope.runId,
    [REIN.sessionId]: scope.sessionId,
  }
}

/** Known at a run's end: how it ended and what it spent, its children's share marked apart. */
export function runEndAttributes(record: RunEndRecord): Attributes {
  const { total, children } = record.cost
  return {
    [REIN.runEndReason]: record.reason,
    ...spendAttributes(REIN.usageTotal, total),
    ...spendAttributes(REIN.usageChildren, children),
    ...(total.attempts > 0 && total.money !== undefined ? { [REIN.costTotal]: total.money } : {}),
    ...(children.attempts > 0 && children.money !== undefined ? { [REIN.costChildren]: children.money } : {}),
    ...(total.unpriced ? { [REIN.costUnpriced]: true } : {}),
    ...(total.estimated ? { [REIN.usageEstimated]: true } : {}),
    ...(runFailed(record) ? { [ATTR.errorType]: record.errorCode ?? record.reason } : {}),
  }
}

/** Whether the run ended in an error (a cancelled or budget-stopped run did not). */
export function runFailed(record: RunEndRecord): boolean {
  return record.reason === 'error' || record.reason === 'failed' || record.errorCode !== undefined
}

/** Known when an attempt starts (and repeated on its end record). */
export function chatStartAttributes(record: LlmCallStartRecord | LlmCallEndRecord): Attributes {
  return {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: record.providerName,
    [ATTR.requestModel]: record.requestModel,
    ...(record.serverAddress !== undefined ? { [ATTR.serverAddress]: record.serverAddress } : {}),
    ...(record.serverPort !== undefined ? { [ATTR.serverPort]: int(record.serverPort) } : {}),
    ...(record.maxTokens !== undefined ? { [ATTR.requestMaxTokens]: int(record.maxTokens) } : {}),
    ...(record.temperature !== undefined ? { [ATTR.requestTemperature]: record.temperature } : {}),
    [ATTR.conversationId]: record.scope.conversationId,
    [REIN.llmRoute]: record.route,
    [REIN.llmRetry]: int(record.retry),
    [REIN.llmFallback]: int(record.fallback),
  }
}

/** Known when an attempt ends: the answer's identity, its usage (when reported), the error. */
export function chatEndAttributes(record: LlmCallEndRecord): Attributes {
  return {
    ...(record.responseId !== undefined ? { [ATTR.responseId]: record.responseId } : {}),
    ...(record.responseModel !== undefined ? { [ATTR.responseModel]: record.responseModel } : {}),
    ...(record.finishReason !== undefined ? { [ATTR.responseFinishReasons]: [mapFinishReason(record.finishReason)] } : {}),
    ...(record.usage ? usageAttributes(record.usage) : {}),
    ...(record.usage && record.usageEstimated ? { [REIN.usageEstimated]: true } : {}),
    ...(record.errorCode !== undefined ? { [ATTR.errorType]: record.errorCode } : {}),
  }
}

/** `gen_ai.client.*` metric attributes of an attempt: low-cardinality, no ids, no content. */
export function chatMetricAttributes(record: LlmCallEndRecord): Attributes {
  return {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: record.providerName,
    [ATTR.requestModel]: record.requestModel,
    ...(record.responseModel !== undefined ? { [ATTR.responseModel]: record.responseModel } : {}),
    ...(record.serverAddress !== undefined ? { [ATTR.serverAddress]: record.serverAddress } : {}),
    ...(record.serverPort !== undefined ? { [ATTR.serverPort]: int(record.serverPort) } : {}),
    ...(record.errorCode !== undefined ? { [ATTR.errorType]: record.errorCode } : {}),
  }
}

/** Known when a tool call starts. */
export function toolStartAttributes(record: ToolCallStartRecord | ToolCallEndRecord): Attributes {
  return {
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: record.toolName,
    [ATTR.toolCallId]: record.callId,
  }
}

/** Known when a tool call ends: only whether (and how) it failed. */
export function toolEndAttributes(record: ToolCallEndRecord): Attributes {
  return record.isError ? { [ATTR.errorType]: record.errorCode ?? ERROR_OTHER } : {}
}

/** The provider's finish reason as the conventions spell it (`tool_calls`, `length`). */
export function mapFinishReason(reason: string): string {
  if (reason === 'max-tokens') return 'length'
  return reason.replaceAll('-', '_')
}

function usageAttributes(usage: Usage): Attributes {
  return {
    [ATTR.usageInputTokens]: conventionInputTokens(usage),
    [ATTR.usageOutputTokens]: int(usage.outputTokens),
    ...(usage.cacheReadTokens !== undefined ? { [ATTR.usageCacheReadInputTokens]: int(usage.cacheReadTokens) } : {}),
  }
}

/** `<prefix>.input_tokens` and friends, or nothing when no attempt reported usage. */
function spendAttributes(prefix: string, spend: Spend): Attributes {
  if (spend.attempts === 0) return {}
  return {
    [`${prefix}.input_tokens`]: conventionInputTokens(spend.usage),
    [`${prefix}.output_tokens`]: int(spend.usage.outputTokens),
    ...(spend.usage.cacheReadTokens !== undefined ? { [`${prefix}.cache_read.input_tokens`]: int(spend.usage.cacheReadTokens) } : {}),
  }
}

/** Counts go out as OTLP `intValue`: the JS SDK writes a number as an integer only when it is one. */
function int(value: number): number {
  return Math.round(value)
}
