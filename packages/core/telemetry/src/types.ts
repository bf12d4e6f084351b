/**
 * The records `ctx.telemetry` builds from the agent's lifecycle events and hands to sinks. Every
 * record carries its run's scope; content (prompts, arguments, results) is never a field, only a
 * function a sink calls when its Config opted in, so a sink that does not ask never holds a byte.
 */

import type { TokenUsage } from '@rein/llm'
import type { ToolEffect } from '@rein/tools'

/** Who a record belongs to: one run of one agent, placed in its tree. */
export interface RunScope {
  readonly runId: string
  /** The run that started this one (a subagent's parent); absent at the root. */
  readonly parentRunId?: string
  /** The parent's tool call that started this run: a subagent's span nests under it. */
  readonly parentCallId?: string
  /** The parent run is told after this one: a repair continued this child for the run its parent starts next. */
  readonly parentRunPending?: boolean
  readonly turnId: string
  readonly sessionId: string
  /** The root session's id: one conversation, subagents included. */
  readonly conversationId: string
  readonly agentName: string
  /** 0 at the root; a subagent's is its parent's + 1. */
  readonly depth: number
}

/** Tokens and money over some provider attempts. */
export interface Spend {
  readonly usage: TokenUsage
  /** Undefined when nothing was counted or a model used has no price (see `unpriced`). */
  readonly money?: number
  /** Some usage came from a model with no price: the money is unknown. */
  readonly unpriced: boolean
  /** Some usage is rein's estimate (the provider reported none). */
  readonly estimated: boolean
  /** Attempts that reported usage. */
  readonly attempts: number
}

/** A run's spend: its own attempts, its descendants' (each counted once), and both. */
export interface CostReport {
  readonly own: Spend
  readonly children: Spend
  readonly total: Spend
}

/** Fields every record has. Times are epoch milliseconds. */
interface RecordBase {
  readonly scope: RunScope
  readonly phase: 'start' | 'end'
  readonly startedAt: number
}

/**
 * What a run was, when not a turn: `compaction`, a compaction between turns (`rein compact`,
 * `/compact`); `repair`, a repair that continued subagents for a run no turn took (the agent was
 * closed first, or the resume failed), whose only spend is theirs.
 */
export type RunPurpose = 'compaction' | 'repair'

/** One run (one `send` or `continue` of an agent, a compaction between turns, or a repair no turn took). */
export interface RunStartRecord extends RecordBase {
  readonly kind: 'run'
  readonly phase: 'start'
  readonly purpose?: RunPurpose
}
export interface RunEndRecord extends RecordBase {
  readonly kind: 'run'
  readonly phase: 'end'
  readonly purpose?: RunPurpose
  readonly endedAt: number
  /** How the run ended (`TurnEndReason`): `completed`, `aborted`, `error`, `budget`, `max-tokens` or `interrupted`. */
  readonly reason: string
  readonly errorCode?: string
  /** The run's spend, children included, as `cost(runId)` reports it when the run ends. */
  readonly cost: CostReport
}

/** One step: a model request and the tools it called. */
export interface StepStartRecord extends RecordBase { readonly kind: 'step'; readonly phase: 'start'; readonly step: number }
export interface StepEndRecord extends RecordBase { readonly kind: 'step'; readonly phase: 'end'; readonly step: number; readonly endedAt: number }

/** What a model was asked: only for sinks that opted into content. */
export interface LlmInputContent {
  readonly system?: string
  /** The conversation as sent, in rein's message shape (`@rein/llm` `Message`). */
  readonly messages: readonly unknown[]
  /** The tools offered: `{name, description, parameters}`. */
  readonly tools?: readonly unknown[]
}

/** One provider attempt (retries and fallbacks are attempts of their own). */
export interface LlmCallStartRecord extends RecordBase {
  readonly kind: 'llm_call'
  readonly phase: 'start'
  readonly step: number
  /** The route name from cordis.yml. */
  readonly route: string
  /** `gen_ai.provider.name`. */
  readonly providerName: string
  readonly requestModel: string
  readonly serverAddress?: string
  readonly serverPort?: number
  readonly maxTokens?: number
  readonly temperature?: number
  /** The reasoning effort asked for, when the request named one. */
  readonly reasoningEffort?: string
  /** 0 for the first try on this route. */
  readonly retry: number
  /** The route's place in the fallback chain: 0 is the primary. */
  readonly fallback: number
  readonly content?: () => LlmInputContent
}
export interface LlmCallEndRecord extends Omit<LlmCallStartRecord, 'phase' | 'content'> {
  readonly phase: 'end'
  readonly endedAt: number
  readonly responseId?: string
  readonly responseModel?: string
  readonly finishReason?: string
  /** Absent when the provider reported none and rein did not estimate it: never written as 0. */
  readonly usage?: TokenUsage
  /** Part or all of `usage` is rein's estimate (see `reportedUsage`). */
  readonly usageEstimated?: true
  /** With `usageEstimated`, when the provider did report: its report, which `usage` adds an estimate of the output after it to. */
  readonly reportedUsage?: TokenUsage
  readonly cost?: number
  /** Absent when the attempt succeeded. */
  readonly errorCode?: string
  /**
   * A request a kill cut off, told by the next process's crash repair when it recorded it in the
   * session log: usage estimated, `startedAt` = `endedAt` (its duration is not known), no start record
   * before it, and its run (the one the kill cut off) told no start or end in this process.
   */
  readonly repaired?: true
  readonly content?: () => LlmInputContent & { readonly output?: readonly unknown[] }
}

/** One tool call. */
export interface ToolCallStartRecord extends RecordBase {
  readonly kind: 'tool_call'
  readonly phase: 'start'
  readonly step: number
  readonly toolName: string
  readonly callId: string
  readonly effects: readonly ToolEffect[]
  /** The arguments as the model wrote them (JSON text): only for sinks that opted into content. */
  readonly content?: () => { readonly arguments: string }
}
export interface ToolCallEndRecord extends Omit<ToolCallStartRecord, 'phase' | 'content'> {
  readonly phase: 'end'
  readonly endedAt: number
  readonly isError: boolean
  readonly errorCode?: string
  /** Arguments and the result's text as the model reads it: only for sinks that opted into content. */
  readonly content?: () => { readonly arguments: string; readonly result: string }
}

/** Every record a sink may get. */
export type TelemetryRecord =
  | RunStartRecord | RunEndRecord
  | StepStartRecord | StepEndRecord
  | LlmCallStartRecord | LlmCallEndRecord
  | ToolCallStartRecord | ToolCallEndRecord

/** Where records go. `emit` must not block; a sink that throws or is slow never reaches the run. */
export interface TelemetrySink {
  /** Names the sink in log lines. */
  readonly name: string
  emit(record: TelemetryRecord): void
  /** Sends what is buffered; awaited (with a deadline) by `ctx.telemetry.flush()`. */
  flush?(): Promise<void>
}
