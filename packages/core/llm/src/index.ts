/**
 * @rein/llm: the `ctx.llm` service and the spec provider packages implement. Load it as a plugin
 * (`name: '@rein/llm'`); providers register adapters on it with `ctx.llm.registerAdapter`.
 */

import { LlmRuntime } from './runtime.ts'

export default LlmRuntime
export { LlmRuntime, PricingSchema, type LlmRuntimeConfig } from './runtime.ts'
/** Config `prices`: a model's prices by route, replacing its catalog's. */
export type { PriceOverrides } from './runtime.ts'
export { LlmAdapter, type AdapterRequest, type GenerationOptions, type ModelInfo, type ProviderEndpoint, type ToolSpec } from './adapter.ts'
export { BlockAssembler, type AssembledFinish } from './assembler.ts'
export { LlmError, isRetryable, toFailure, type LlmFailure, type LlmFailureCode } from './errors.ts'
export {
  createMessage, userMessage, assistantMessage, toolResultMessage, newToolCallId,
  type Message, type MessageSource, type Role, type ContentBlock, type TextBlock, type ReasoningBlock,
  type ImageBlock, type ToolCallBlock, type ToolResultBlock,
} from './message.ts'
export type { LlmRequest, LlmEvent, LlmAttempt, AttemptStart, ModelRoute, Resend } from './request.ts'
export { DEFAULT_RETRY_POLICY, retryDelay, type RetryPolicy } from './retry.ts'
export { isDelta, assertNever, type StreamChunk, type FinishReason, type StreamBlockType } from './stream.ts'
export { addUsage, costOfUsage, MAX_PRICE, type TokenUsage, type Pricing } from './usage.ts'
/** Token estimates where no provider counted: a text (`charTokens`, 4 characters a token), messages, a request's whole input. */
export { charTokens, inputTokens, messageTokens, type Tokenizer } from './estimate.ts'
/** The `UNSUPPORTED_REASONING_EFFORT` failure for an effort a model's catalog entry does not list, or undefined. */
export { unsupportedEffort } from './fallback.ts'
