/**
 * Lifecycle events on the cordis context: what telemetry, budgets across a tree and UIs outside the
 * agent are built from. Each carries the run's identity. They are dispatched synchronously, skipped
 * entirely when nobody listens, and a listener that throws (or rejects) is logged and never reaches
 * the run.
 */

import type { Context, Logger } from '@deepseek-ai/cordis'
import { eventSender } from '@rein/base'
import type { ContentBlock, FinishReason, Message, TokenUsage } from '@rein/llm'
import type { TurnEndReason } from '@rein/session'
import type { RunIdentity, ToolEffect, ToolSchema } from '@rein/tools'

/** Fields every lifecycle event has. Times are epoch milliseconds. */
export interface LifecycleBase {
  identity: RunIdentity
  turn: number
}

/** `agent/turn-start`: a turn began (its run id is new). */
export interface TurnStartEvent extends LifecycleBase { startedAt: number }
/** `agent/turn-end`: a turn ended, with its reason and what all its attempts used. */
export interface TurnEndEvent extends LifecycleBase {
  startedAt: number
  endedAt: number
  reason: TurnEndReason
  errorCode?: string
  /** Over every attempt of the turn, failed ones included. */
  usage: TokenUsage
  cost?: number
}
/**
 * A compaction between turns (`compactNow`: `rein compact`, a chat's `/compact`): a run of its own,
 * with a fresh run id, numbered with the turn it follows (0 before any). Its summary request's
 * attempts come as `agent/llm-start` and `agent/llm-end` with its identity and step 0. A compaction
 * inside a turn is not one of these: its attempts are the turn's.
 */
export interface CompactionStartEvent extends LifecycleBase { startedAt: number }
/** `agent/compaction-end`: a compaction between turns ended. */
export interface CompactionEndEvent extends LifecycleBase {
  startedAt: number
  endedAt: number
  /** `completed` whether or not it wrote anything (a failed summary is its attempt's error); `aborted` on a cancel. */
  reason: 'completed' | 'aborted' | 'error'
  errorCode?: string
  /** Over its attempts, failed ones included. */
  usage: TokenUsage
  cost?: number
}
/**
 * A repair that continued subagents for the run that was to start next (a resume's, or the one
 * before the next turn or compaction after an interrupt), when no turn takes that run — the agent
 * is closed first, the agents service is disposed first, or the resume fails and is not retried
 * for the same parent run: a run of its own, with the run id those children name as their parent,
 * so what they spent is counted in a run. Numbered with the turn it follows. Both events are sent
 * together, once that is known (at `close`, at the service's dispose, or — after a failed resume —
 * when the session is resumed for another parent run or the service is disposed); `startedAt` and
 * `endedAt` are the repair's. The repair asks no model itself.
 */
export interface RepairStartEvent extends LifecycleBase { startedAt: number }
/** The end of such a repair's run (see `RepairStartEvent`), sent right after its start. */
export interface RepairEndEvent extends LifecycleBase {
  startedAt: number
  endedAt: number
  /**
   * `error` when the last repair working for the run failed (the log could not be written, say) or
   * was stopped by its signal (`errorCode: REPAIR_INTERRUPTED`: the next resume goes on with it).
   */
  reason: 'completed' | 'error'
  errorCode?: string
}
/** `agent/step-start`: one request-and-tools step of a turn began. */
export interface StepStartEvent extends LifecycleBase { step: number; startedAt: number }
/** `agent/step-end`: a step ended. */
export interface StepEndEvent extends LifecycleBase { step: number; startedAt: number; endedAt: number }

/** One provider attempt, in the OpenTelemetry GenAI conventions' terms where they have one. */
export interface LlmAttemptStartEvent extends LifecycleBase {
  step: number
  /** The route name (`provider` in cordis.yml). */
  route: string
  /** `gen_ai.provider.name`: what the server is, which a route name need not say. */
  providerName: string
  /** `server.address` / `server.port`, when the adapter says where it sends requests. */
  serverAddress?: string
  serverPort?: number
  /** `gen_ai.request.model`. */
  requestModel: string
  maxTokens?: number
  temperature?: number
  reasoningEffort?: string
  /** 0 for the first try on this route. */
  retry: number
  /** Position of the route in the fallback chain: 0 is the primary. */
  fallback: number
  startedAt: number
  /**
   * What the model is asked, by reference (nothing is copied). Content: a listener that exports
   * must leave it out unless its user opted in. Read it while handling the event.
   */
  input: LlmAttemptInput
}

/** The request's content, as the agent sends it. */
export interface LlmAttemptInput {
  readonly system?: string
  readonly messages: readonly Message[]
  readonly tools?: readonly ToolSchema[]
}
/** `agent/llm-end`: one provider attempt ended, with its usage, cost and finish. */
export interface LlmAttemptEndEvent extends LlmAttemptStartEvent {
  endedAt: number
  responseId?: string
  responseModel?: string
  finishReason?: FinishReason
  usage?: TokenUsage
  /** Part or all of `usage` is rein's estimate: the provider reported none, or none for the output after `reportedUsage`. */
  usageEstimated?: true
  /** With `usageEstimated`, when the provider did report: its last report, which `usage` adds an estimate to. */
  reportedUsage?: TokenUsage
  cost?: number
  /** Absent when the attempt succeeded. */
  errorCode?: string
  /** The answer's blocks when the attempt succeeded (content, as `input`); built when called. */
  output?: () => readonly ContentBlock[]
  /**
   * Told by crash repair, not by the request: the attempt a kill cut off, which the next process's
   * repair recorded in the log (`llm/attempt`). Its usage is an estimate (`usageEstimated`), it
   * failed `ABORTED`, `startedAt` = `endedAt` = when it was sent (its duration is not known), and no
   * `agent/llm-start` came before it. Told once, when the record is saved; its identity is the run
   * the crash cut off (`identity.runId` from the log's `turn/start`).
   */
  repaired?: true
}
/** `agent/tool-start`: a tool call's body is about to run. */
export interface ToolStartEvent extends LifecycleBase {
  step: number
  name: string
  callId: string
  effects: readonly ToolEffect[]
  startedAt: number
  /** The arguments as the model wrote them (content: see `LlmAttemptStartEvent.input`). */
  arguments: string
}
/** `agent/tool-end`: a tool call ended, with whether it failed. */
export interface ToolEndEvent extends ToolStartEvent {
  endedAt: number
  durationMs: number
  isError: boolean
  /** The result's code when it is an error. */
  code?: string
  /** The result's text as the model reads it — a spilled result's preview (content); built when called. */
  result: () => string
}

/** Every lifecycle event by name, with its payload. */
export interface LifecycleEvents {
  'agent/turn-start': TurnStartEvent
  'agent/turn-end': TurnEndEvent
  'agent/step-start': StepStartEvent
  'agent/step-end': StepEndEvent
  'agent/llm-start': LlmAttemptStartEvent
  'agent/llm-end': LlmAttemptEndEvent
  'agent/tool-start': ToolStartEvent
  'agent/tool-end': ToolEndEvent
  'agent/compaction-start': CompactionStartEvent
  'agent/compaction-end': CompactionEndEvent
  'agent/repair-start': RepairStartEvent
  'agent/repair-end': RepairEndEvent
}

declare module '@deepseek-ai/cordis' {
  interface Events {
    'agent/turn-start'(event: TurnStartEvent): void
    'agent/turn-end'(event: TurnEndEvent): void
    'agent/step-start'(event: StepStartEvent): void
    'agent/step-end'(event: StepEndEvent): void
    'agent/llm-start'(event: LlmAttemptStartEvent): void
    'agent/llm-end'(event: LlmAttemptEndEvent): void
    'agent/tool-start'(event: ToolStartEvent): void
    'agent/tool-end'(event: ToolEndEvent): void
    'agent/compaction-start'(event: CompactionStartEvent): void
    'agent/compaction-end'(event: CompactionEndEvent): void
    'agent/repair-start'(event: RepairStartEvent): void
    'agent/repair-end'(event: RepairEndEvent): void
  }
}

/** Sends one lifecycle event; `make` runs only when someone listens. */
export type Notify = <K extends keyof LifecycleEvents>(name: K, make: () => LifecycleEvents[K]) => void

/** A `Notify` on `ctx`: no listener → nothing is built or dispatched; a failing listener is logged. */
export function lifecycleNotifier(ctx: Context, logger: Logger): Notify {
  // `Notify` pairs each name with its event; past it, any lifecycle event goes with any lifecycle name.
  type Name = keyof LifecycleEvents
  const events = eventSender<Record<Name, (event: LifecycleEvents[Name]) => void>>(ctx, (name, error) => logger.error('a %s listener failed: %s', name, error))
  return (name, make) => {
    const key: Name = name
    if (events.has(key)) events.send(key, [make()])
  }
}
