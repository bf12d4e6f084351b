/** What a delegation is given and what it answers. */

import type { TokenUsage } from '@rein/llm'
import type { RunIdentity } from '@rein/tools'

/** The call that delegates: where the child hangs in the tree, and the signal it follows. */
export interface DelegatingCall {
  readonly callId: string
  readonly sessionId?: string
  readonly identity?: RunIdentity
  /** Aborting it cancels the child's turn (recorded `aborted`). */
  readonly signal: AbortSignal
}

/** One delegation. */
export interface SubagentRequest {
  /** The task, the child's whole context: it sees nothing else of the parent's conversation. */
  prompt: string
  /** A profile name from Config `profiles`. */
  agent?: string
  /** Narrows the child's tools further, by name or glob. */
  tools?: readonly string[]
  /** Continue this earlier subagent session of the caller's (its id from a result or error), with `prompt` as its next message. */
  resume?: string
  /** A few words saying what the child does: a background job's label. Default: the prompt. */
  description?: string
  call: DelegatingCall
}

/** A child started in the background: the `subagent` tool's value for `run_in_background`. */
export interface BackgroundStarted {
  kind: 'background'
  /** The child's session, linked to the parent's. */
  sessionId: string
  /** The `ctx.jobs` job that runs it (`subagent-<n>`): job_output, job_list and job_kill take it. */
  jobId: string
}

/** A child's final answer: what the `subagent` tool returns. */
export interface SubagentResult {
  /** The child's session, linked to the parent's (its header names the parent session, run and call). */
  sessionId: string
  answer: string
  /** How the child's turn ended; always `completed` in a result (anything else is an error). */
  reason: string
  /** The child turn's tokens, its own subagents' included (the same tree `cost` covers). */
  usage?: TokenUsage
  /** The child turn's money, its own subagents included; absent when a model used was unpriced. */
  cost?: number
}
