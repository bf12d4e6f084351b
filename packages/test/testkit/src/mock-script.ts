/**
 * The script a mock OpenAI-compatible server plays: one reply per request, in order (or computed
 * from the request). A stream reply is a list of steps written as real SSE, with faults as steps;
 * other replies cover HTTP errors, bodies that are not event streams, and ready-made provider errors.
 */

import type { JsonValue } from '@rein/base'

/**
 * Named chunks that parse as JSON but have the wrong shape, each sent as one `data:` event:
 * - `null-choice`: `choices: [null]`
 * - `null-tool-call`: `delta.tool_calls: [null]`
 * - `number-content`: `delta.content: 42`
 * - `string-delta`: `delta: "x"`
 * - `string-choices`: `choices: "x"`
 * - `number-tool-name`: a tool call whose `function.name` is `7`
 * - `array-usage`: `usage: [1, 2]`
 * - `string-tokens`: `usage.prompt_tokens: "12 tokens"` (a string of digits alone is read as the count)
 */
export type MockWrongShape =
  | 'null-choice' | 'null-tool-call' | 'number-content' | 'string-delta' | 'string-choices'
  | 'number-tool-name' | 'array-usage' | 'string-tokens'

/** One step of a streamed reply. */
export type MockStep =
  /** A `delta.content` chunk. */
  | { text: string }
  /** A `delta.reasoning_content` chunk (DeepSeek, vLLM reasoning parsers). */
  | { reasoning: string }
  /**
   * A tool call: the first chunk carries id, type and name with empty arguments, then one chunk per
   * fragment. `id` defaults to `call_<n>`; `null` sends the call without any id, as some local
   * servers do. `index` defaults to the order of first appearance.
   */
  | { toolCall: { id?: string | null; name: string; arguments: string | readonly string[]; index?: number } }
  /**
   * More argument fragments for a tool call already sent, by its `id`: how calls interleave. An id
   * no earlier step sent ends the stream with an in-stream error saying so.
   */
  | { toolArguments: { id: string; arguments: string | readonly string[] } }
  /** An SSE comment line (`: keep-alive`), as servers send while a request waits. */
  | { keepAlive: true }
  /** Bytes written as they are: broken JSON, blank lines, anything. */
  | { raw: string }
  /** One `data:` event carrying exactly this JSON value, without the chunk envelope: any shape at all. */
  | { event: JsonValue }
  /** One `data:` event with a chunk that parses but has the wrong shape; see `MockWrongShape`. */
  | { wrongShape: MockWrongShape }
  /**
   * An in-stream error: `data: {"error": {...}}`, after which the server ends the response. `type`
   * defaults to `server_error`, `code` and `param` to null; extra keys (llama.cpp's `n_ctx`) are sent as given.
   */
  | { error: { message: string; type?: string; code?: string | number | null; [extra: string]: JsonValue | undefined } }
  /**
   * `bytes` of filler, written in 64 KiB pieces as fast as the client takes them and never built in
   * memory. `comment` (default): SSE comment lines, which a client skips, so the stream stays valid
   * however big it gets. `event`: one `data:` line of `bytes` spaces, ended only after all of them:
   * an event bigger than any client should buffer.
   */
  | { filler: { bytes: number; as?: 'comment' | 'event' } }
  /** Wait before the next step. */
  | { delayMs: number }
  /** Wait until this promise settles (another request arrived, say): orders replies without a clock. */
  | { waitFor: Promise<unknown> }
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

/** A streamed reply: its steps written as real SSE, faults among them, and the usage it reports. */
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
  /** The chunk envelope's `id`. Default `chatcmpl-mock`. */
  id?: string
  /** The chunk envelope's `model`, the model the server says answered. Default: the requested model. */
  model?: string
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

/** Faults in how a non-stream body is written; both may be combined. */
export interface MockBodyFaults {
  /**
   * Pad the body with spaces up to this many bytes (a JSON body stays valid JSON). The padding is
   * written in 64 KiB pieces as fast as the client takes them and never built in memory, so a
   * 200 MB body costs the server nothing; `reply.bytesWritten` shows how much the client took.
   */
  bodyBytes?: number
  /**
   * Send the status line, the headers and only the first this-many bytes of the body, then
   * nothing more: the connection stays open until the client gives up (or `close()`). `0` sends
   * the headers alone.
   */
  stallAfterBytes?: number
}

/** An HTTP error reply with an OpenAI-shaped JSON body unless `body` says otherwise (a string is sent as text). */
export interface MockErrorReply extends MockBodyFaults {
  kind: 'error'
  status: number
  /** Default: `{error: {message, type, param: null, code}}` built from `message`/`type`/`code`. */
  body?: JsonValue | string
  message?: string
  type?: string
  code?: string | number | null
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Readonly<Record<string, string>>
}

/** Any status with any body and content type: a proxy's HTML page, a JSON answer to a streaming request. */
export interface MockHttpReply extends MockBodyFaults {
  kind: 'http'
  /** Default 200. */
  status?: number
  /** Default `text/html; charset=utf-8`. */
  contentType?: string
  /** Default: a small HTML page. */
  body?: string
  headers?: Readonly<Record<string, string>>
}

/** Servers whose error wording the mock can reproduce. */
export type MockServerKind = 'openai' | 'deepseek' | 'llama.cpp' | 'vllm' | 'ollama'

/**
 * A request that does not fit the model's context, worded as `server` words it (taken from each
 * project's source; the mock server's file cites them). HTTP 400 by default; with `inStream` a 200
 * event stream whose only event is the same error object (`steps` may put output before it).
 * Ollama answers this one with a status in practice; its in-stream form is the same object.
 */
export interface MockContextOverflowReply {
  kind: 'context-overflow'
  server: MockServerKind
  inStream?: boolean
  /** Steps written before the error when `inStream`. */
  steps?: readonly MockStep[]
  /** Default 9739. */
  promptTokens?: number
  /** Default 8192. */
  contextTokens?: number
}

/**
 * The requested model is not served, worded as `server` words it: HTTP 404 (DeepSeek: 400
 * "Model Not Exist"). The message names the requested model where the server does.
 */
export interface MockModelNotFoundReply {
  kind: 'model-not-found'
  server: MockServerKind
}

/** One reply of a mock server: a stream, an HTTP error, another body, or a ready-made provider error. */
export type MockReply = MockStreamReply | MockErrorReply | MockHttpReply | MockContextOverflowReply | MockModelNotFoundReply

/**
 * How the server's reply to one request went. Fields change while the reply is written; wait for
 * `settled` before asserting on them.
 */
export interface MockReplyRecord {
  /** Body bytes the client's socket accepted (headers not counted). */
  bytesWritten: number
  /** The client closed the connection before the server finished its reply; a stalled reply is never finished. */
  clientClosedEarly: boolean
  /** Resolves once the server is done with the request: its reply ended, the client went away, or `close()` ran. */
  readonly settled: Promise<void>
}

/** What the server saw: every request, in arrival order. */
export interface RecordedRequest {
  method: string
  path: string
  headers: Readonly<Record<string, string>>
  /** The parsed JSON body (undefined if it was not JSON). */
  body: unknown
  /** The body exactly as received. */
  raw: string
  /** Which connection it came on: 1, 2, … in the order the server accepted them (a kept-alive connection carries several). */
  connection: number
  /** How the reply went: bytes written, and whether the client hung up first. */
  readonly reply: MockReplyRecord
}

/**
 * Replies in order, or a function of the request and its 0-based position among chat-completions
 * requests. A request past the end of the list, or one the function throws on, gets a 500 that says
 * so. Any route other than `POST …/chat/completions` gets a 404 and takes no reply from the script.
 */
export type MockScript = readonly MockReply[] | ((request: RecordedRequest, index: number) => MockReply)
