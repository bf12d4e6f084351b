/**
 * Records to span and metric attributes, as pure functions. Provider-reported usage goes on `chat`
 * spans only (rein's estimates under `rein.usage.estimated.*`); a run's totals (children included)
 * go on its `invoke_agent` span under `rein.*`.
 */

import type { Attributes } from '@opentelemetry/api'
import type { LlmCallEndRecord, LlmCallStartRecord, RunEndRecord, RunScope, Spend, ToolCallEndRecord, ToolCallStartRecord } from '@rein/telemetry'
import { ATTR, ERROR_OTHER, OPERATION, REIN, TOOL_TYPE_FUNCTION } from './semconv.ts'

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
    ...(record.purpose !== undefined ? { [REIN.runPurpose]: record.purpose } : {}),
    [REIN.runEndReason]: record.reason,
    ...(record.errorCode !== undefined ? { [REIN.runEndCode]: record.errorCode } : {}),
    ...spendAttributes(REIN.usageTotal, total),
    ...spendAttributes(REIN.usageChildren, children),
    ...(total.attempts > 0 && total.money !== undefined ? { [REIN.costTotal]: total.money } : {}),
    ...(children.attempts > 0 && children.money !== undefined ? { [REIN.costChildren]: children.money } : {}),
    ...(total.unpriced ? { [REIN.costUnpriced]: true } : {}),
    ...(total.estimated ? { [REIN.usageTotalEstimated]: true } : {}),
    ...(runFailed(record) ? { [ATTR.errorType]: runErrorType(record) } : {}),
  }
}

/**
 * Whether the run failed, by its end reason (`TurnEndReason` of @rein/session): `error` did, and so
 * did `interrupted` (rein shut down under it: it did not finish, and nobody asked it to stop).
 * `budget` and `max-tokens` ended at a limit the run was given, and `aborted` because a person
 * cancelled it: not failures, though the first two carry a code (`rein.run.end_code`).
 */
export function runFailed(record: RunEndRecord): boolean {
  return record.reason === 'error' || record.reason === 'interrupted'
}

/** `error.type` of a failed run: the error's code, `interrupted`, or `_OTHER` for an error without one. */
function runErrorType(record: RunEndRecord): string {
  if (record.reason === 'interrupted') return record.reason
  return record.errorCode ?? ERROR_OTHER
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

/**
 * Known when an attempt ends: the answer's identity, its usage, the error. Usage the provider
 * reported is `gen_ai.usage.*`; rein's estimate (the provider said nothing) is no provider usage, so
 * it goes under `rein.usage.estimated.*`, where a backend summing `gen_ai.usage.*` does not count it.
 */
export function chatEndAttributes(record: LlmCallEndRecord): Attributes {
  // Assigned: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
  const attributes: Attributes = {}
  if (record.responseId !== undefined) attributes[ATTR.responseId] = record.responseId
  if (record.responseModel !== undefined) attributes[ATTR.responseModel] = record.responseModel
  if (record.finishReason !== undefined) attributes[ATTR.responseFinishReasons] = [mapFinishReason(record.finishReason)]
  if (record.usage) Object.assign(attributes, chatUsageAttributes(record.usage, record.usageEstimated === true, record.reportedUsage))
  if (record.errorCode !== undefined) attributes[ATTR.errorType] = record.errorCode
  return attributes
}

/**
 * An attempt's usage on its span: the provider's under `gen_ai.usage.*`; rein's estimate under
 * `rein.usage.estimated.*`, or, when the provider reported part of it, only what the estimate
 * added to that report. Either way the two add up to what the attempt was charged.
 */
function chatUsageAttributes(usage: Usage, estimated: boolean, reported: Usage | undefined): Attributes {
  if (!estimated) return usageAttributes(ATTR.usage, usage)
  if (reported === undefined) return usageAttributes(REIN.usageEstimated, usage)
  const attributes = usageAttributes(ATTR.usage, reported)
  // Only what the estimate added: the output after the report (input is the report's own).
  const input = conventionInputTokens(usage) - conventionInputTokens(reported)
  if (input > 0) attributes[`${REIN.usageEstimated}.input_tokens`] = input
  attributes[`${REIN.usageEstimated}.output_tokens`] = int(usage.outputTokens - reported.outputTokens)
  return attributes
}

/** Usage the provider reported for an attempt (its part of an estimated one), or undefined: rein's estimates are no measurement. */
export function reportedUsage(record: LlmCallEndRecord): Usage | undefined {
  return record.usageEstimated ? record.reportedUsage : record.usage
}

/**
 * `gen_ai.client.*` metric attributes of an attempt: low-cardinality, no ids, no content. v1.41
 * lists `error.type` for the duration metric, not for token usage: the duration adds it.
 */
export function chatMetricAttributes(record: LlmCallEndRecord): Attributes {
  return {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: record.providerName,
    [ATTR.requestModel]: record.requestModel,
    ...(record.responseModel !== undefined ? { [ATTR.responseModel]: record.responseModel } : {}),
    ...(record.serverAddress !== undefined ? { [ATTR.serverAddress]: record.serverAddress } : {}),
    ...(record.serverPort !== undefined ? { [ATTR.serverPort]: int(record.serverPort) } : {}),
  }
}

/** Known when a tool call starts. */
export function toolStartAttributes(record: ToolCallStartRecord | ToolCallEndRecord): Attributes {
  return {
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: record.toolName,
    [ATTR.toolType]: TOOL_TYPE_FUNCTION,
    [ATTR.toolCallId]: record.callId,
  }
}

/** Known when a tool call ends: only whether (and how) it failed. */
export function toolEndAttributes(record: ToolCallEndRecord): Attributes {
  return record.isError ? { [ATTR.errorType]: record.errorCode ?? ERROR_OTHER } : {}
}

/** The finish reason as `gen_ai.response.finish_reasons` spells it (`tool_calls`, `length`): the provider's words, rein's hyphens made underscores. */
export function mapFinishReason(reason: string): string {
  if (reason === 'max-tokens') return 'length'
  return reason.replaceAll('-', '_')
}

/** `<prefix>.input_tokens` (as the conventions count input), `.output_tokens`, `.cache_read.input_tokens`. */
function usageAttributes(prefix: string, usage: Usage): Attributes {
  return {
    [`${prefix}.input_tokens`]: conventionInputTokens(usage),
    [`${prefix}.output_tokens`]: int(usage.outputTokens),
    ...(usage.cacheReadTokens !== undefined ? { [`${prefix}.cache_read.input_tokens`]: int(usage.cacheReadTokens) } : {}),
  }
}

/** A spend's usage under `prefix`, or nothing when no attempt reported usage. */
function spendAttributes(prefix: string, spend: Spend): Attributes {
  return spend.attempts === 0 ? {} : usageAttributes(prefix, spend.usage)
}

/** Counts go out as OTLP `intValue`: the JS SDK writes a number as an integer only when it is one. */
function int(value: number): number {
  return Math.round(value)
}
