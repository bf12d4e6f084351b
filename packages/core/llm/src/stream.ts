/**
 * `StreamChunk`: what every adapter yields, plus the runtime's `discard`. Rules every adapter obeys:
 * - block indexes are assigned in first-seen order, starting at 0;
 * - tool arguments stay raw strings end to end;
 * - `usage` comes before `finish`, and nothing comes after `finish`;
 * - `usage` may come more than once, as soon as the provider reports it: each is the attempt's usage
 *   so far and replaces the one before (the last wins, never a sum), so a cancelled attempt is
 *   charged what the provider already counted.
 */

import type { JsonValue } from '@rein/base'
import type { LlmFailure } from './errors.ts'
import type { ContentBlock } from './message.ts'
import type { TokenUsage } from './usage.ts'

/** Why a stream ended, as its `finish` chunk says. */
export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'aborted' | 'error'
/** What a streamed block holds, as its `block-start` chunk says. */
export type StreamBlockType = 'text' | 'reasoning' | 'tool-call'

/** One piece of a streamed answer: what adapters yield and `ctx.llm.stream` passes on (rules above). */
export type StreamChunk =
  | { type: 'block-start'; index: number; blockType: StreamBlockType }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'reasoning-delta'; index: number; text: string }
  /** `name`, when present, is the call's whole name so far and replaces any earlier one (a name a server streams in pieces grows). */
  | { type: 'tool-call-delta'; index: number; id: string; name?: string; argumentsDelta: string }
  /** The block, fully assembled. */
  | { type: 'block-end'; index: number; block: ContentBlock }
  /** The attempt's usage so far; replaces any earlier `usage` chunk of the attempt. */
  | { type: 'usage'; usage: TokenUsage }
  /**
   * `failure` is set for `error` and `aborted`; `replayState` is opaque provider state to store with
   * the message; `responseId` and `responseModel` are what the provider said it answered with.
   */
  | { type: 'finish'; reason: FinishReason; failure?: LlmFailure; replayState?: JsonValue; responseId?: string; responseModel?: string }
  /**
   * Sent by the runtime only (it drops one an adapter yields): everything this stream showed so far
   * — reasoning of an attempt that failed before any text or tool call — is void; drop it. Another
   * attempt's chunks follow, its block indexes starting again at 0.
   */
  | { type: 'discard' }

/** True for the chunks that show the caller something of the answer. */
export function isDelta(chunk: StreamChunk): boolean {
  return chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' || chunk.type === 'tool-call-delta'
}

/**
 * True for a chunk that shows the caller part of the answer itself — text or a tool call — which a
 * retry must not take back. Reasoning, block starts, a reasoning block's end and usage are not.
 */
export function showsAnswer(chunk: StreamChunk): boolean {
  if (chunk.type === 'text-delta' || chunk.type === 'tool-call-delta') return true
  return chunk.type === 'block-end' && chunk.block.type !== 'reasoning'
}

/**
 * True for a chunk that gives the caller something to act on: visible text or a tool call.
 * Reasoning alone answers nothing. A `stop` or `tool-calls` finish with no such chunk is an
 * `EMPTY_RESPONSE` (see `isEmptyFinish`).
 */
export function carriesAnswer(chunk: StreamChunk): boolean {
  switch (chunk.type) {
    case 'text-delta':
      return chunk.text.trim() !== ''
    case 'tool-call-delta':
      return true
    case 'block-end':
      return chunk.block.type === 'tool-call' || (chunk.block.type === 'text' && chunk.block.text.trim() !== '')
    default:
      return false
  }
}

/**
 * Whether a finish that answered nothing is an empty response: a `stop`, or a `tool-calls` with no
 * call (a server whose tool-call parser failed on the model's output). `length` and a filter stop
 * the model for a reason of their own.
 */
export function isEmptyFinish(reason: FinishReason, answered: boolean): boolean {
  return !answered && (reason === 'stop' || reason === 'tool-calls')
}

/** The failure of an answer that holds nothing to act on; retried, as another try usually answers. */
export const EMPTY_RESPONSE: LlmFailure = Object.freeze({ code: 'EMPTY_RESPONSE', message: 'the model returned an empty response' })

/** Makes a `switch` over a union exhaustive: it fails to compile when a case is missing, and throws if reached. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`)
}
