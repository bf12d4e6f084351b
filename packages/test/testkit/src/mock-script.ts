/**
 * The script a mock OpenAI-compatible server plays: one reply per request, in order (or computed
 * from the request). A stream reply is a list of steps written as real SSE, with faults as steps.
 */

import type { JsonValue } from '@rein/base'

/** One step of a streamed reply. */
export type MockStep =
  /** A `delta.content` chunk. */
  | { text: string }
  /** A `delta.reasoning_content` chunk (DeepSeek, vLLM reasoning parsers). */
  | { reasoning: string }
  /**
   * A tool call: the first chunk carries id, type and name with empty arguments, then one chunk per
   * fragment. `id` defaults to `call_<n>`; `index` defaults to the order of first appearance.
   */
  | { toolCall: { id?: string; name: string; arguments: string | readonly string[]; index?: number } }
  /**
   * More argument fragments for a tool call already sent, by its `id`: how calls interleave. An id
   * no earlier step sent ends the stream with an in-stream error saying so.
   */
  | { toolArguments: { id: string; arguments: string | readonly string[] } }
  /** An SSE comment line (`: keep-alive`), as servers send while a request waits. */
  | { keepAlive: true }
  /** Bytes written as they are: broken JSON, blank lines, anything. */
  | { raw: string }
  /** An in-stream error: `data: {"error": {...}}`, after which the server ends the response. */
  | { error: { message: string; type?: string; code?: string | null } }
  /** Wait before the next step. */
  | { delayMs: number }
  /**
   * Stop writing and keep the connection open until the client gives up. As the first step (or after
   * only `delayMs`) nothing at all was sent, not even the status line: the client is still waiting
   * for headers, so its request timeout applies.
   */
  | { stall: true }
  /**
   * Destroy the socket now, after everything before it has reached the socket. As the first step the
   * client gets no response at all.
   */
  | { disconnect: true }

/** Usage as the wire carries it; fields absent from a provider are simply left out. */
export interface MockUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number }
  completion_tokens_details?: { reasoning_tokens?: number }
  prompt_cache_hit_tokens?: number
  prompt_cache_miss_tokens?: number
}

export interface MockStreamReply {
  kind?: 'stream'
  /**
   * The role chunk goes out just before the first text, reasoning, tool call or finish chunk, so
   * keep-alive comments and delays written first come before it, as on the real wire.
   */
  steps: readonly MockStep[]
  /**
   * Chunk shapes. `openai` (default): the role chunk is `{role: 'assistant', content: '', refusal: null}`.
   * `deepseek`: the role chunk is `{role: 'assistant', content: null, reasoning_content: ''}`, text
   * chunks carry `reasoning_content: null`, and usage defaults to the finish chunk.
   */
  dialect?: 'openai' | 'deepseek'
  /** `finish_reason` of the final chunk. Default: `tool_calls` when any tool call was sent, else `stop`. `null` sends no finish chunk. */
  finishReason?: string | null
  /** Default: small plausible counts. `null` sends no usage at all. */
  usage?: MockUsage | null
  /**
   * Where usage travels. `separate-chunk` (OpenAI with `stream_options.include_usage`: one more chunk
   * with `choices: []`), or `finish-chunk` (DeepSeek: on the chunk that carries `finish_reason`).
   * Default: `separate-chunk` (sent only when the request asked for it); `finish-chunk` (sent always)
   * for the `deepseek` dialect.
   */
  usageIn?: 'separate-chunk' | 'finish-chunk'
  /** Send `data: [DONE]` at the end. Default true. */
  done?: boolean
  /** Write the response in pieces of this many bytes (splits lines and UTF-8 sequences). Default: one write per event. */
  chunkBytes?: number
  /** Extra response headers, besides `x-request-id: mock-req-<n>` which every response carries. */
  headers?: Readonly<Record<string, string>>
}

/** An HTTP error reply with an OpenAI-shaped JSON body unless `body` says otherwise (a string is sent as text). */
export interface MockErrorReply {
  kind: 'error'
  status: number
  /** Default: `{error: {message, type, param: null, code}}` built from `message`/`type`/`code`. */
  body?: JsonValue | string
  message?: string
  type?: string
  code?: string | null
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Readonly<Record<string, string>>
}

export type MockReply = MockStreamReply | MockErrorReply

/** What the server saw: every request, in arrival order. */
export interface RecordedRequest {
  method: string
  path: string
  headers: Readonly<Record<string, string>>
  /** The parsed JSON body (undefined if it was not JSON). */
  body: unknown
  /** The body exactly as received. */
  raw: string
}

/**
 * Replies in order, or a function of the request and its 0-based position among chat-completions
 * requests. A request past the end of the list, or one the function throws on, gets a 500 that says
 * so. Any route other than `POST …/chat/completions` gets a 404 and takes no reply from the script.
 */
export type MockScript = readonly MockReply[] | ((request: RecordedRequest, index: number) => MockReply)
