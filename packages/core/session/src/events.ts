/**
 * The session log's vocabulary: the header, the event envelope, and the core event types with their
 * data. Plugins add types with `ctx.sessions.defineEvent`.
 */

import type { JsonValue } from '@rein/base'
import type { ImageBlock, LlmEvent, Message, TextBlock, TokenUsage } from '@rein/llm'

/** Raise only with a migration: a reader refuses logs of a newer format. */
export const SESSION_FORMAT_VERSION = 1

/** What a session's header records, outside its log: format, id, creation time, cwd, and its place in a tree. */
export interface SessionHeader {
  formatVersion: number
  id: string
  /** ISO 8601. */
  createdAt: string
  cwd: string
  /** A child session's (a subagent's): the session, run and tool call that started it. */
  parentSessionId?: string
  parentRunId?: string
  parentCallId?: string
  /** 0 for a top-level session; a child's is its parent's + 1. */
  depth: number
}

/** One log entry. `seq` is contiguous from 0; `time` is ISO 8601; `data` is JSON only. */
export interface SessionEvent<T extends string = string, D = JsonValue> {
  seq: number
  type: T
  time: string
  data: D
  /**
   * A reader that does not know the type may skip the event: set on every event of a type defined
   * `ignorable` (only types the model sees none of), or by the one appending it.
   */
  ignorable?: true
}

/**
 * How a turn ended. `budget`: a limit of the turn (steps, output tokens, cost) stopped it;
 * `max-tokens`: the model hit its output limit for one request (the answer is cut off);
 * `interrupted`: the process or the service running it went away (written by repair or dispose).
 */
export type TurnEndReason = 'completed' | 'aborted' | 'error' | 'budget' | 'max-tokens' | 'interrupted'

/** A limit crossed by an answer that arrived anyway: the turn completed, and this says by how much. */
export interface TurnOverrun {
  code: string
  message: string
}

/** The generation options a step's request was sent with, after defaults; a resume reuses them. */
export interface StepRequest {
  provider: string
  model: string
  maxTokens?: number
  temperature?: number
  reasoningEffort?: string
}

/** Data of the core event types. */
export interface CoreEventData {
  /**
   * `runId`: this `send` or `continue`; `turnId`: `<sessionId>/<turn>`; `anchor`: the id of the
   * user message the turn answers (a child run's is its root run's). All absent in older logs.
   */
  /** A subagent's turn names the run and tool call it works for (a resumed child: the call that resumed it). */
  'turn/start': { turn: number; runId?: string; turnId?: string; anchor?: string; parentRunId?: string; parentCallId?: string; conversationId?: string }
  'turn/end': { turn: number; reason: TurnEndReason; error?: { code: string; message: string }; overrun?: TurnOverrun }
  /** `request` is absent in logs written before it was recorded. */
  'step/start': { turn: number; step: number; request?: StepRequest }
  'step/end': { turn: number; step: number }
  'user/message': { message: Message }
  /**
   * What a request was built from. `system` and `tools` are written in full whenever they differ
   * from the previous header; the hashes always.
   */
  'request/header': {
    provider: string
    model: string
    system?: string
    tools?: JsonValue
    systemHash: string
    toolsHash: string
    /** Pinned prompt sections rendered for the first time in this request, by id: every later request reads them from here. */
    pinned?: Record<string, string>
  }
  'assistant/message': {
    message: Message
    usage?: TokenUsage
    provider: string
    model: string
    /** Money for this request, when the model is priced. */
    cost?: number
    /** The stream was cut (cancelled or failed) after showing this text; it carries no tool calls. */
    interrupted?: true
  }
  /** Written and flushed before the tool body runs: the intent. */
  'tool/call': { callId: string; name: string; arguments: string; replaySafe: boolean }
  'tool/result': {
    callId: string
    content: readonly (TextBlock | ImageBlock)[]
    isError: boolean
    code?: string
    meta?: JsonValue
    /** Logs written before observation spill: the cap on characters the model saw of `content`. */
    modelChars?: number
    /**
     * The result was bigger than the agent's limit: `content` is the preview the model reads, and
     * the full text is in the file at `path` (in the session's folder).
     */
    spill?: { path: string; chars: number; lines: number }
  }
  'llm/retry': Extract<LlmEvent, { type: 'retry' }>
  'llm/fallback': Extract<LlmEvent, { type: 'fallback' }>
  /**
   * One provider attempt, success or not: the record usage and cost are summed from. The
   * successful attempt's usage also appears on its `assistant/message`; count one or the other.
   * `cost` is money for this attempt's usage, when the model is priced.
   */
  'llm/attempt': Omit<Extract<LlmEvent, { type: 'attempt' }>, 'type'> & { cost?: number }
  /**
   * A compaction's summary request is about to be sent (flushed with it, like a step's `step/start`):
   * its route and output budget, and its input as the compaction's tokenizer counted it. Its
   * attempts' `llm/attempt` records follow; when none does, a kill cut it off, and repair records
   * one, estimated from this, since the summary prompt itself is not in the log.
   */
  'summary/start': SummaryStart
  /**
   * An attempt after a request's first (a retry, a fallback) is about to be sent (flushed with
   * it, after the failed attempt's record): its route, its place and its generation options. Its
   * `llm/attempt` follows; when none does, a kill cut it off, and repair records one, estimated as
   * the request's first attempt would be.
   */
  'llm/resend': LlmResend
  /**
   * The context was compacted: from here on the model sees the pruned results as one-line stubs
   * and the summarized range as one message where it began. The full history stays in the log.
   * Written once the compaction is complete: a kill before leaves the history as it was.
   */
  'context/compacted': ContextCompacted
  /**
   * The events before this one were copied from session `fromSessionId` (those before its
   * `beforeSeq`), by `rein rewind --fork`: their tokens and money were that session's, and this
   * one counts its own from here.
   */
  'session/forked': { fromSessionId: string; beforeSeq: number }
  /**
   * How much the answer being streamed held so far (text, reasoning and tool-call arguments), in
   * characters: left every few thousand while it streams, kept across a killed process without
   * waiting for the disk. When a kill cuts the attempt off, repair counts its output from the last
   * one after its request's mark; its own `llm/attempt` counts it otherwise.
   */
  'llm/progress': { outputChars: number }
}

/** A summary request as sent (`summary/start`): enough to count it when its attempt was never recorded. */
export interface SummaryStart {
  request: { provider: string; model: string; maxTokens: number }
  /** The request's input tokens, as the compaction's tokenizer counts them (its instructions and transcript). */
  inputTokens: number
}

/** A request sent again (`llm/resend`): enough to count it when its attempt was never recorded. */
export interface LlmResend {
  request: StepRequest
  /** As the attempt's `llm/attempt` will say: its retry on the route, the route's place in the chain. */
  retry: number
  fallback: number
}

/** What one compaction changed in what the model sees (`context/compacted`). */
export interface ContextCompacted {
  /**
   * `auto`: the context meter passed its threshold; `manual`: someone asked (with `instructions`,
   * if given); `overflow`: the provider refused a request as too long, and it is asked again after.
   */
  reason: 'auto' | 'manual' | 'overflow'
  instructions?: string
  /** The next request's estimated input tokens before and after. */
  tokensBefore: number
  tokensAfter: number
  /** Tool results replaced by a stub, by call id (and tool name); `chars`: the text the stub stands for. */
  pruned: { callId: string; name: string; chars: number }[]
  /**
   * Tool calls whose arguments the model sees with each long field replaced by its size
   * (`prunedArguments` in derive.ts); `chars`: the arguments' length. Absent in logs written before it.
   */
  prunedArguments?: { callId: string; name: string; chars: number }[]
  /**
   * The messages of events `fromSeq`…`toSeq` (a range that never splits a call from its result) are
   * replaced by `text`, which a later compaction updates rather than summarizes again. `keptSeq`:
   * a person's message inside the range that stays word for word, right after the summary — the
   * request of the turn the range cuts into, which the model is still working on.
   */
  summary?: { text: string; fromSeq: number; toSeq: number; keptSeq?: number; provider: string; model: string }
  /** A summary was wanted but not made (the request failed or overflowed): the compaction pruned only. */
  summaryFailed?: { code: string; message: string }
}

/** The type of an event this package defines (`turn/start`, `tool/result`, …). */
export type CoreEventType = keyof CoreEventData
/** Core types written `ignorable` whoever appends them, so a rein that predates them loads the log. */
export const IGNORABLE_CORE_EVENT_TYPES: readonly CoreEventType[] = ['llm/attempt', 'summary/start', 'llm/resend', 'session/forked', 'llm/progress']
/** Every core event type, defined from the start: a plugin never needs `defineEvent` for these. */
export const CORE_EVENT_TYPES: readonly CoreEventType[] = [
  'turn/start', 'turn/end', 'step/start', 'step/end', 'user/message', 'request/header',
  'assistant/message', 'tool/call', 'tool/result', 'llm/retry', 'llm/fallback', 'llm/attempt',
  'summary/start', 'llm/resend', 'context/compacted', 'session/forked', 'llm/progress',
]

/** An event before the log gives it a `seq` and a `time`. */
export type EventDraft<T extends string = string, D = JsonValue> = Omit<SessionEvent<T, D>, 'seq' | 'time'>

/** A core event with its typed data, a union on `type`. */
export type CoreEvent = { [T in CoreEventType]: SessionEvent<T, CoreEventData[T]> }[CoreEventType]
