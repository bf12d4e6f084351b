/**
 * OpenAI wire stream → rein `StreamChunk`s. Stateful across one response; pure otherwise, so it is
 * tested without a network. The finish is held until the end of the stream, because usage may
 * arrive after `finish_reason` on this wire. Usage is passed on as it arrives: a caller that cancels
 * mid-stream is charged what the server already counted, not an estimate.
 */

import type { JsonValue } from '@rein/base'
import { LlmError, newToolCallId, type ContentBlock, type FinishReason, type LlmFailure, type StreamChunk, type TokenUsage } from '@rein/llm'
import { failureFromStreamError, serverError, topLevelError } from './errors.ts'
import type { WireToolCallDelta, WireUsage } from './wire.ts'
import { checkChunk, malformed, tokenCount } from './wire-shape.ts'

interface Block {
  index: number
  type: 'text' | 'reasoning' | 'tool-call'
  text: string
  id?: string
  /** The id came from the server (not made up here): another id at its index is another call. */
  wireId?: true
  name?: string
}

/** Turns one response's parsed `data:` payloads into `StreamChunk`s; see `createChunkTranslator`. */
export interface ChunkTranslator {
  /**
   * One parsed `data:` payload → the chunks it means. Throws `LlmError` for in-stream errors and for
   * payloads of the wrong shape (`MALFORMED_RESPONSE`); never anything else.
   */
  push(payload: unknown): StreamChunk[]
  /** The stream ended (`sawDone`: with `[DONE]`). Returns the closing chunks or throws `STREAM_CLOSED`. */
  end(sawDone: boolean): StreamChunk[]
  /** The last usage the server reported so far (each report also went out as a `usage` chunk from `push`). */
  usageSoFar(): TokenUsage | undefined
  /** Whether a `finish_reason` came: the answer is whole. */
  finished(): boolean
  /**
   * Whether the closing usage chunk (usage, no choices) came after the `finish_reason`: on this wire
   * nothing but `[DONE]` follows it, so a reader need not wait for that.
   */
  complete(): boolean
}

/** What a translator adds to the chunks beyond the wire's content. */
export interface TranslatorOptions {
  /** Put on every finish that is not an error, for the caller to store with the message (a dialect's mark). */
  replayState?: JsonValue
}

/** A translator for one response; `provider` names the server in failure messages. */
export function createChunkTranslator(provider: string, options: TranslatorOptions = {}): ChunkTranslator {
  const blocks: Block[] = []
  const tools = new Map<number, Block>()
  let text: Block | undefined
  let reasoning: Block | undefined
  let finishReason: string | undefined
  let usage: TokenUsage | undefined
  let usageAfterFinish = false
  let responseId: string | undefined
  let responseModel: string | undefined

  const open = (type: Block['type'], out: StreamChunk[]): Block => {
    const block: Block = { index: blocks.length, type, text: '' }
    blocks.push(block)
    out.push({ type: 'block-start', index: block.index, blockType: type })
    return block
  }

  const say = (said: string, out: StreamChunk[]) => {
    text ??= open('text', out)
    text.text += said
    out.push({ type: 'text-delta', index: text.index, text: said })
  }

  const toolDelta = (call: WireToolCallDelta, position: number, out: StreamChunk[]) => {
    const wireIndex = typeof call.index === 'number' ? call.index : position
    const id = typeof call.id === 'string' && call.id ? call.id : undefined
    const piece = typeof call.function?.name === 'string' && call.function.name !== '' ? call.function.name : undefined
    const raw = call.function?.arguments
    let block = tools.get(wireIndex)
    // A new id and a name where a call is open start another call: some servers send each call
    // whole in its own event, all at index 0 or with no index. An id alone is not enough: some
    // change the id on a call's later deltas, which name no function.
    if (!block || (piece !== undefined && (anotherId(block, id) || anotherWholeCall(block, raw)))) {
      block = open('tool-call', out)
      // Some servers omit the id, or give two calls one. A made-up one must stay unique for the whole
      // session (results are paired and crashes repaired by id), so it is random, not derived from the position.
      const fresh = id !== undefined && !blocks.some((each) => each.id === id)
      block.id = fresh && id !== undefined ? id : newToolCallId()
      if (fresh) block.wireId = true
      tools.set(wireIndex, block)
    }
    const name = piece === undefined ? undefined : grownName(block.name, piece)
    if (name !== undefined) block.name = name
    // Arguments stay the model's raw text; a server that sends an object gets it re-serialized once.
    const argumentsDelta = raw === undefined || raw === null ? '' : typeof raw === 'string' ? raw : serializeArguments(raw, provider)
    block.text += argumentsDelta
    if (name || argumentsDelta) out.push({ type: 'tool-call-delta', index: block.index, id: block.id ?? '', ...(name ? { name } : {}), argumentsDelta })
  }

  return {
    push(payload) {
      const chunk = checkChunk(payload, provider)
      if (chunk.error !== undefined && chunk.error !== null) throw serverError(failureFromStreamError(provider, chunk.error))
      if (!Array.isArray(chunk.choices) && !chunk.usage) throw notAChunk(payload as Readonly<Record<string, unknown>>, provider)
      if (responseId === undefined && chunk.id) responseId = chunk.id
      if (responseModel === undefined && chunk.model) responseModel = chunk.model
      const out: StreamChunk[] = []
      for (const choice of chunk.choices ?? []) {
        if ((choice.index ?? 0) !== 0) continue
        const delta = choice.delta ?? {}
        const thought = delta.reasoning_content ?? delta.reasoning
        if (typeof thought === 'string' && thought !== '') {
          reasoning ??= open('reasoning', out)
          reasoning.text += thought
          out.push({ type: 'reasoning-delta', index: reasoning.index, text: thought })
        }
        if (typeof delta.content === 'string' && delta.content !== '') say(delta.content, out)
        // A refusal (OpenAI's `refusal`, in place of content) is what the model said: shown as its text.
        if (typeof delta.refusal === 'string' && delta.refusal !== '') say(delta.refusal, out)
        if (Array.isArray(delta.tool_calls)) delta.tool_calls.forEach((call, position) => toolDelta(call, position, out))
        if (typeof choice.finish_reason === 'string' && choice.finish_reason) finishReason = choice.finish_reason
      }
      // After the event's deltas, which it counts. A server's reports are cumulative (vLLM's continuous
      // stats, a relay's usage on every chunk): each replaces the last, never adds to it. One that
      // counts nothing ({} or null counts) is no report: booked as 0 in / 0 out it would stop the
      // runtime from estimating, and budgets from seeing the answer's tokens.
      if (chunk.usage && countsTokens(chunk.usage)) {
        usage = mapUsage(chunk.usage)
        out.push({ type: 'usage', usage })
      }
      // The closing usage chunk (no choices) after the finish, not usage on a chunk that has some:
      // relays that mark every chunk finished, with usage on each, still stream text after it.
      if (chunk.usage && finishReason !== undefined && (chunk.choices?.length ?? 0) === 0) usageAfterFinish = true
      return out
    },

    end(sawDone) {
      if (finishReason === undefined && !sawDone) {
        throw new LlmError({ code: 'STREAM_CLOSED', message: `${provider} closed the stream before the model finished` })
      }
      const out: StreamChunk[] = blocks.map((block) => ({ type: 'block-end', index: block.index, block: assemble(block) }))
      const finish = mapFinishReason(finishReason, tools.size > 0)
      // Assigned: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
      const response: { replayState?: JsonValue; responseId?: string; responseModel?: string } = {}
      if (options.replayState !== undefined && typeof finish === 'string') response.replayState = options.replayState
      if (responseId !== undefined) response.responseId = responseId
      if (responseModel !== undefined) response.responseModel = responseModel
      out.push(typeof finish === 'string' ? { type: 'finish', reason: finish, ...response } : { type: 'finish', reason: 'error', failure: finish, ...response })
      return out
    },

    usageSoFar: () => usage,

    finished: () => finishReason !== undefined,

    complete: () => usageAfterFinish,
  }
}

/** `id` came from the server and differs from the one of the call open at its index. */
function anotherId(block: Block, id: string | undefined): boolean {
  return id !== undefined && block.wireId === true && block.id !== id
}

/**
 * A named delta whose arguments begin an object where the open call's are already whole JSON: a server
 * that sends each call whole in its own event without ids (nor indexes) sent another call. A relay
 * repeating the name on every piece of one call's arguments sends the name while they are still
 * partial; after them it sends no arguments, or none that begin anew.
 */
function anotherWholeCall(block: Block, raw: unknown): boolean {
  const begins = typeof raw === 'string' ? /^\s*\{/.test(raw) : typeof raw === 'object' && raw !== null
  // Parsed only where an object ends and another begins: a relay repeating the name on each of
  // thousands of pieces would otherwise parse the growing arguments on every one.
  if (!begins || !block.text.trimEnd().endsWith('}')) return false
  try {
    JSON.parse(block.text)
    return true
  } catch {
    return false
  }
}

/**
 * Why an event with neither choices nor usage fails: an error object sent without the `error`
 * envelope is that error, in its words (it would otherwise be lost as a malformed event).
 */
function notAChunk(event: Readonly<Record<string, unknown>>, provider: string): LlmError {
  const error = topLevelError(event)
  if (error) return serverError(failureFromStreamError(provider, error))
  return malformed(provider, 'a stream event with neither choices nor usage, which is no chat-completion chunk; is the server an OpenAI-compatible chat-completions API?')
}

/**
 * The call's name once `piece` came, or undefined when the piece adds nothing. Servers may stream a
 * name in pieces (OpenAI's own SDK joins streamed strings), so a piece is appended; some relays
 * resend the whole name on every delta, so a piece that is exactly the name so far is that repeat.
 * The delta carries the whole name so far, never the bare piece: the assembler in `@rein/llm` takes
 * a delta's `name` as the call's name and replaces the one it had, so it ends with the whole name.
 */
function grownName(sofar: string | undefined, piece: string): string | undefined {
  return piece === sofar ? undefined : (sofar ?? '') + piece
}

/** Object arguments as text; one nested too deeply for JSON.stringify (a RangeError) is a malformed event. */
function serializeArguments(raw: unknown, provider: string): string {
  try {
    return JSON.stringify(raw)
  } catch {
    throw malformed(provider, 'tool call arguments nested too deeply to read')
  }
}

function assemble(block: Block): ContentBlock {
  if (block.type === 'tool-call') return { type: 'tool-call', id: block.id ?? '', name: block.name ?? '', arguments: block.text }
  return { type: block.type, text: block.text }
}

/** Wire finish reason → rein's. Reasons that mean the answer was cut for the provider's own reasons are failures. */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason | LlmFailure {
  switch (reason) {
    case 'length':
      return 'max-tokens'
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls'
    case 'content_filter':
      return { code: 'INVALID_REQUEST', message: "the provider's content filter stopped the response" }
    case 'insufficient_system_resource':
      return { code: 'SERVER', message: 'the provider ran out of capacity mid-response (insufficient_system_resource)' }
    default:
      // `stop`, a missing reason after [DONE], or one we do not know: some servers say `stop` after tool calls.
      return hasToolCalls ? 'tool-calls' : 'stop'
  }
}

/** Whether `wire` counts a prompt or a completion: without either it says nothing about the answer's tokens. */
function countsTokens(wire: WireUsage): boolean {
  return tokenCount(wire.prompt_tokens) !== undefined || tokenCount(wire.completion_tokens) !== undefined
}

/**
 * Wire usage → disjoint `TokenUsage`: cached prompt tokens are taken out of `inputTokens`. A server
 * that reports more cached tokens than prompt tokens is held to its prompt count: the input is never
 * counted above what the server says the prompt had.
 */
export function mapUsage(wire: WireUsage): TokenUsage {
  // Counts are read through `tokenCount`: a server may send them as strings of digits.
  const promptCount = tokenCount(wire.prompt_tokens)
  const prompt = promptCount ?? 0
  const reported = tokenCount(wire.prompt_tokens_details?.cached_tokens) ?? tokenCount(wire.prompt_cache_hit_tokens)
  const cached = reported !== undefined && promptCount !== undefined ? Math.min(reported, prompt) : reported
  const reasoning = tokenCount(wire.completion_tokens_details?.reasoning_tokens)
  const completion = tokenCount(wire.completion_tokens) ?? 0
  return {
    inputTokens: Math.max(0, prompt - (cached ?? 0)),
    // Reasoning is part of the output (OpenAI's completion_tokens holds it); more reasoning than
    // completion means a server that counted it apart, and output is both.
    outputTokens: reasoning !== undefined && reasoning > completion ? completion + reasoning : completion,
    ...(cached !== undefined ? { cacheReadTokens: cached } : {}),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
  }
}
