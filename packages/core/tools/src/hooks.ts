/**
 * The extension points of the execution pipeline, in the order they run:
 * pre-execute policies → guards → execute wrappers → body → post-execute hooks → result observers.
 */

import type { FrozenJson, JsonObject, JsonValue } from '@rein/base'
import type { JsonSchema } from './json-schema.ts'
import type { ToolContent, ToolResult } from './result.ts'
import type { ToolEffect } from './effects.ts'
import type { RunIdentity } from './run-context.ts'

/**
 * What hooks may know about the tool being called: data only, frozen, never its functions, so no
 * hook can change how this or a later call runs.
 */
export interface ToolInfo {
  readonly name: string
  readonly description: string
  /** The compiled parameters schema, as the model sees it. */
  readonly parameters: JsonSchema
  /** What the tool declared it may do; empty for a pure tool. */
  readonly effects: readonly ToolEffect[]
  /** The tool's `replaySafe`, or its default from `effects`. */
  readonly replaySafe: boolean
  /** The tool's own deadline; absent when it declares none and the registry's `defaultTimeoutMs` applies. */
  readonly timeoutMs?: number
  /** How long a cancelled body may take to end with its own error; absent: it may not. */
  readonly cancelGraceMs?: number
  /** An interrupted call that ended in error is left for `recover` on resume (see `ToolDefinition`). */
  readonly recoverAfterInterrupt?: true
}

/**
 * A validated call, as every hook sees it: frozen all the way down. The body gets the arguments
 * validated before any hook ran; a hook that wants other arguments must deny and say so.
 */
export interface ToolCall {
  readonly callId: string
  readonly toolName: string
  readonly args: FrozenJson<JsonObject>
  readonly sessionId?: string
  readonly cwd: string
  readonly workspaceRoot: string
  readonly identity?: RunIdentity
  readonly tool: ToolInfo
}

/**
 * `tools/pre-execute`. The registry combines every policy's answer: deny beats ask beats allow.
 * A deny may name the `code` the call fails with: its `reason` is then the whole message, as if
 * the tool had refused. For a policy that refuses, before anyone is asked, what the tool would
 * refuse anyway (its store failed, arguments that can never succeed): the model reads the same
 * failure either way. Without a code: `DENIED`, `<tool> was denied: <reason>`; so too with a code
 * that says the call did something else (`ABORTED`, `UNKNOWN_TOOL`, `TOOL_TIMEOUT`, `TOOL_NOT_STARTED`,
 * …: logs, the compaction ledger, spans and resume read those as what happened). A call failed
 * with a tool's own code reads as one its body refused: the compaction ledger counts it as run
 * (its paths listed), so name a code only for tools whose body would refuse the same way.
 */
export type PreExecuteDecision =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string; code?: string }
  | { kind: 'ask'; reason: string }
/** Returning nothing means no opinion. A policy that throws denies. */
export type PreExecutePolicy = (call: ToolCall) => PreExecuteDecision | undefined | Promise<PreExecuteDecision | undefined>

/** Returns a denial reason, or nothing. A guard can only deny; one that throws denies. */
export type ToolGuard = (call: ToolCall) => string | undefined | Promise<string | undefined>

/** What dispatch produced. Wrappers may look at it; they must return the object `next` gave them. */
export type DispatchOutcome = Readonly<{ ok: true; value: unknown } | { ok: false; error: unknown }>

/**
 * `tools/execute`: wraps dispatch to set a deadline or measure. Calls `next` at most once and
 * returns what it produced; may pass a different signal (the caller's signal still applies) or
 * throw a `ReinError` (e.g. a deadline). Anything else is a wrapper bug and fails the call.
 */
export type ExecuteWrapper = (
  call: ToolCall & { signal: AbortSignal },
  next: (signal?: AbortSignal) => Promise<DispatchOutcome>,
) => Promise<DispatchOutcome>

/** `tools/post-execute`, a waterfall over successful results in registration order. */
export type PostExecuteDecision =
  | { kind: 'accept' }
  | { kind: 'replace-content'; content: string | ToolContent }
  /** The new value is validated against `output.schema` and rendered again. */
  | { kind: 'replace-value'; value: JsonValue }
  /** Adds a text part the model reads after the result (e.g. "this file changed since you read it"). */
  | { kind: 'append'; text: string }
  /** Turns the success into a `BLOCKED` error whose content is `feedback`. */
  | { kind: 'block'; feedback: string }
/** `tools/post-execute`: sees a result before the model does, and may keep, replace, append to or block it. */
export type PostExecuteHook = (
  call: ToolCall,
  result: { value: FrozenJson; content: ToolContent },
) => PostExecuteDecision | undefined | Promise<PostExecuteDecision | undefined>

/** The raw request, for observers: it may name no tool or carry invalid arguments. */
export interface ToolRequestSummary {
  callId: string
  toolName: string
  arguments: string
  sessionId?: string
}

/** `tools/result`: sees every outcome. Failures are logged and never affect the call. */
export type ResultObserver = (request: ToolRequestSummary, result: ToolResult) => void | Promise<void>

/** The approval service read from `ctx.get('approval')` when a policy asks. */
export interface ApprovalRequest {
  callId: string
  toolName: string
  args: FrozenJson<JsonObject>
  /** The tool's declared effects, so an approver can allow by kind (`--allow write`). */
  effects: readonly ToolEffect[]
  reason: string
  /**
   * Set when a pre-execute policy asked (its reason): the call is risky beyond its effects, so an
   * approver that allows by effect kind (`--allow write`) must not answer it; a person, `--yes`, or
   * allowing the tool by name may.
   */
  policy?: string
  signal: AbortSignal
}
/** `ctx.approval`: answers whether a call that needs approval may run. */
export interface ApprovalService {
  request(request: ApprovalRequest): 'allow' | 'deny' | Promise<'allow' | 'deny'>
}
