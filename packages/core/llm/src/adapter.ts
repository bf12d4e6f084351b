/** What a provider package implements: one adapter call is one attempt at one provider. */

import type { Message } from './message.ts'
import type { StreamChunk } from './stream.ts'
import type { Pricing } from './usage.ts'

/** The model-facing description of a tool: exactly what `ctx.tools.schemas()` returns. */
export interface ToolSpec {
  name: string
  description: string
  parameters: Readonly<Record<string, unknown>>
}

/** Catalog facts about a model. Advisory: a model missing from a catalog is still requested. */
export interface ModelInfo {
  id: string
  contextWindow?: number
  /** Output budget used when a request names none. */
  maxTokens?: number
  /** Reasoning efforts the model accepts, in order, and the one used when a request names none. */
  reasoning?: { efforts: readonly string[]; default?: string }
  pricing?: Pricing
}

/** What to generate from: shared by the caller's request and each attempt an adapter receives. */
export interface GenerationOptions {
  system?: string
  messages: readonly Message[]
  tools?: readonly ToolSpec[]
  maxTokens?: number
  temperature?: number
  reasoningEffort?: string
}

/** One attempt, as an adapter receives it: defaults already applied, effort already checked. */
export interface AdapterRequest extends GenerationOptions {
  /** The route this call came in on; one adapter may serve several. */
  provider: string
  model: string
  signal: AbortSignal
  /**
   * Call once the request has gone out to the server (its body handed to the network): from then
   * the provider may bill it, so an attempt that ends without word from the server (cancelled, timed
   * out, its connection lost) and without a usage report is charged an estimate of its input. An
   * adapter that never calls it counts as having sent at its first chunk.
   */
  sent?: () => void
  /**
   * Call when the server answers with an error in place of a stream to read (an error status, an
   * error event, an error body): a refusal is not billed, so an attempt that then ends without a
   * usage report is charged nothing, however it ends (a cancel while its error body is read).
   */
  refused?: () => void
}

/**
 * Providers extend this. `stream` makes exactly one request and yields `StreamChunk`s; it may
 * throw an `LlmError` (before or during the stream) or end with a `finish` of reason `error`.
 * Retry, fallback and abort handling belong to the runtime, never to an adapter.
 */
export abstract class LlmAdapter {
  abstract stream(request: AdapterRequest): AsyncIterable<StreamChunk>
  /**
   * The same attempt as `stream`, as the chunks that arrived together (one read of the response):
   * the runtime prefers it, awaiting once per read instead of once per chunk. Optional; an empty
   * array is skipped, and the runtime never changes one. `stream` should be made of it.
   */
  streamBatches?(request: AdapterRequest): AsyncIterable<readonly StreamChunk[]>
  /** Metadata for a model; may answer asynchronously (a catalog fetched from the server), honouring `signal`. */
  resolveModel?(provider: string, model: string, signal?: AbortSignal): ModelInfo | undefined | Promise<ModelInfo | undefined>
  listModels?(provider: string): readonly ModelInfo[]
  /** Where a route's requests go, for `--verbose` and telemetry. Never includes credentials. */
  endpoint?(provider: string): ProviderEndpoint | undefined
}

/** The server behind a route: a label for messages and the base URL requests go to. */
export interface ProviderEndpoint {
  label: string
  baseURL?: string
  /**
   * The server's `gen_ai.provider.name` in the OpenTelemetry GenAI conventions (`openai`,
   * `deepseek`, …), which may differ from the route name: a route named `openai` may point at vLLM.
   */
  providerName?: string
}
