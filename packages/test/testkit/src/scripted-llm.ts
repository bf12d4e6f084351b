/**
 * `createScriptedLlm`: an in-process `LlmAdapter` that replays scripted turns as `StreamChunk`s,
 * one turn per `stream()` call, and records every request it was given.
 */

import {
  LlmAdapter, LlmError,
  type AdapterRequest, type FinishReason, type LlmFailure, type ModelInfo, type StreamChunk, type TokenUsage,
} from '@rein/llm'

/** One step of a scripted turn. */
export type ScriptedStep =
  /** A text delta. Consecutive text steps extend one text block. */
  | { text: string }
  /** A reasoning delta. Consecutive reasoning steps extend one reasoning block. */
  | { reasoning: string }
  /**
   * A tool call: a block of its own. An array of `arguments` is sent as one delta per fragment.
   * `id` defaults to `call_<call index>_<n>`.
   */
  | { toolCall: { id?: string; name: string; arguments: string | readonly string[] } }
  /** Usage of the turn. Wherever it is written, it is sent after the last block, just before `finish`. */
  | { usage: TokenUsage }
  /** Throws `new LlmError(fail)` at this point; blocks still open stay unfinished. */
  | { fail: LlmFailure }

/** The steps of one turn, and how it ends. A bare array is a turn with the default finish. */
export type ScriptedTurn =
  | readonly ScriptedStep[]
  | {
    steps: readonly ScriptedStep[]
    /** Default: `tool-calls` if the turn has a tool call, else `stop`. */
    finish?: FinishReason
    /** Carried by the `finish` chunk; meant for the reasons `error` and `aborted`. */
    failure?: LlmFailure
  }

/** Turns in call order, or a function of the request and its 0-based call index. */
export type ScriptedLlmScript = readonly ScriptedTurn[] | ((request: AdapterRequest, index: number) => ScriptedTurn)

/** How a scripted adapter answers model lookups, besides its script. */
export interface ScriptedLlmOptions {
  /** What `resolveModel` (by id, for any provider) and `listModels` answer. Default: none. */
  models?: readonly ModelInfo[]
}

/** A scripted adapter; `requests` holds every request `stream()` received, in order. */
export class ScriptedLlm extends LlmAdapter {
  readonly requests: AdapterRequest[] = []

  constructor(private readonly script: ScriptedLlmScript, private readonly models: readonly ModelInfo[] = []) {
    super()
  }

  /** Takes the next call index now; the turn is read, and any failure thrown, once iterated. */
  stream(request: AdapterRequest): AsyncIterable<StreamChunk> {
    const index = this.requests.length
    this.requests.push(request)
    return play(() => this.turn(request, index), request.signal, index)
  }

  override resolveModel(_provider: string, model: string): ModelInfo | undefined {
    return this.models.find((info) => info.id === model)
  }

  override listModels(): readonly ModelInfo[] {
    return this.models
  }

  private turn(request: AdapterRequest, index: number): ScriptedTurn {
    const script = this.script
    if (typeof script === 'function') return script(request, index)
    const turn = script[index]
    if (!turn) throw new LlmError({ code: 'INVALID_REQUEST', message: `the scripted LLM's script is exhausted after ${script.length} calls; call #${index + 1} has no turn` })
    return turn
  }
}

/** An adapter that answers each `stream()` call with the next scripted turn. */
export function createScriptedLlm(script: ScriptedLlmScript, options: ScriptedLlmOptions = {}): ScriptedLlm {
  return new ScriptedLlm(script, options.models)
}

async function* play(next: () => ScriptedTurn, signal: AbortSignal, callIndex: number): AsyncGenerator<StreamChunk, void, undefined> {
  const turn = next()
  const { steps, finish, failure } = 'steps' in turn ? turn : { steps: turn, finish: undefined, failure: undefined }
  const blocks = new BlockWriter()
  let toolCalls = 0
  let usage: TokenUsage | undefined
  const emit = function* (chunks: readonly StreamChunk[]) {
    for (const chunk of chunks) {
      if (signal.aborted) throw new LlmError({ code: 'ABORTED', message: 'the request was cancelled' })
      yield chunk
    }
  }

  for (const step of steps) {
    if ('text' in step) yield* emit(blocks.delta('text', step.text))
    else if ('reasoning' in step) yield* emit(blocks.delta('reasoning', step.reasoning))
    else if ('toolCall' in step) {
      const { id = `call_${callIndex}_${toolCalls}`, name, arguments: args } = step.toolCall
      toolCalls++
      yield* emit(blocks.toolCall(id, name, typeof args === 'string' ? [args] : args))
    } else if ('usage' in step) usage = step.usage
    else throw new LlmError(step.fail)
  }
  yield* emit(blocks.close())
  if (usage) yield* emit([{ type: 'usage', usage }])
  yield* emit([{ type: 'finish', reason: finish ?? (toolCalls > 0 ? 'tool-calls' : 'stop'), ...(failure ? { failure } : {}) }])
}

/** Numbers blocks in order and frames them: `block-start`, deltas, `block-end` with the whole block. */
class BlockWriter {
  private next = 0
  private open: { index: number; type: 'text' | 'reasoning'; text: string } | undefined

  /** Extends the open block when it has the same type, else starts one. */
  delta(type: 'text' | 'reasoning', text: string): StreamChunk[] {
    const chunks: StreamChunk[] = []
    let open = this.open
    if (open?.type !== type) {
      chunks.push(...this.close())
      open = this.open = { index: this.next++, type, text: '' }
      chunks.push({ type: 'block-start', index: open.index, blockType: type })
    }
    open.text += text
    chunks.push({ type: type === 'text' ? 'text-delta' : 'reasoning-delta', index: open.index, text })
    return chunks
  }

  /** A tool call is a block of its own, started and ended here. */
  toolCall(id: string, name: string, fragments: readonly string[]): StreamChunk[] {
    const chunks = this.close()
    const index = this.next++
    const deltas = fragments.length > 0 ? fragments : ['']
    return [
      ...chunks,
      { type: 'block-start', index, blockType: 'tool-call' },
      ...deltas.map((argumentsDelta, n): StreamChunk => (
        n === 0 ? { type: 'tool-call-delta', index, id, name, argumentsDelta } : { type: 'tool-call-delta', index, id, argumentsDelta }
      )),
      { type: 'block-end', index, block: { type: 'tool-call', id, name, arguments: fragments.join('') } },
    ]
  }

  close(): StreamChunk[] {
    const open = this.open
    if (!open) return []
    this.open = undefined
    return [{ type: 'block-end', index: open.index, block: { type: open.type, text: open.text } }]
  }
}
