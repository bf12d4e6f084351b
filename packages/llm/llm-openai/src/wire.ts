/**
 * The OpenAI chat-completions wire, as far as rein reads and writes it.
 * Written from the API reference (https://platform.openai.com/docs/api-reference/chat/create-chat-completion)
 * and the streaming shapes in research/llm-wire-formats.md. Response types keep only the fields used,
 * all optional: servers differ and add fields.
 */

export type WireContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }

export interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** A message as the chat-completions API takes it: what `toWireMessages` makes of rein's. */
export type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | WireContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[]; reasoning_content?: string }
  | { role: 'tool'; tool_call_id: string; content: string }

interface WireTool {
  type: 'function'
  function: { name: string; description: string; parameters: Readonly<Record<string, unknown>> }
}

/** The body of a streaming chat-completions request, as `toWireRequest` builds it, with room for a dialect's own fields. */
export interface WireRequest {
  model: string
  messages: WireMessage[]
  tools?: WireTool[]
  max_tokens?: number
  max_completion_tokens?: number
  temperature?: number
  stream: true
  stream_options: { include_usage: true }
  [extra: string]: unknown
}

/** A response's `usage` object, the fields `mapUsage` reads (OpenAI's and DeepSeek's). */
export interface WireUsage {
  // Counts may come as strings of digits from some servers and proxies; `mapUsage` reads both.
  prompt_tokens?: number | string | null
  completion_tokens?: number | string | null
  prompt_tokens_details?: { cached_tokens?: number | string | null } | null
  completion_tokens_details?: { reasoning_tokens?: number | string | null } | null
  /** DeepSeek: prompt tokens served from its cache. */
  prompt_cache_hit_tokens?: number | string | null
}

export interface WireToolCallDelta {
  index?: number | null
  id?: string | null
  function?: { name?: string | null; arguments?: unknown } | null
}

interface WireDelta {
  content?: string | null
  /** DeepSeek and vLLM reasoning parsers. */
  reasoning_content?: string | null
  /** OpenRouter. */
  reasoning?: string | null
  /** OpenAI: the model's refusal, sent in place of content. */
  refusal?: string | null
  tool_calls?: WireToolCallDelta[] | null
}

/** One parsed `data:` event of a streamed response: the fields the chunk translator reads. */
export interface WireChunk {
  /** The response id, the same on every chunk of one response. */
  id?: string | null
  /** The model that answered, as the server names it. */
  model?: string | null
  choices?: { index?: number | null; delta?: WireDelta | null; finish_reason?: string | null }[] | null
  usage?: WireUsage | null
  /** Some servers send a bare string. */
  error?: WireError | string | null
}

export interface WireError {
  message?: string | null
  type?: string | null
  code?: string | number | null
}
