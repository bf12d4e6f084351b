import { LlmAdapter, LlmError, type AdapterRequest, type LlmFailure, type ModelInfo, type StreamChunk } from '../src/index.ts'

/** One scripted attempt: chunks to yield, optionally a failure to throw after them, or a gate to wait on. */
export interface FakeAttempt {
  chunks?: StreamChunk[]
  throws?: LlmFailure
  /** Yields `chunks`, then waits for this promise before finishing. */
  gate?: Promise<void>
}

export const say = (text: string): StreamChunk[] => [
  { type: 'block-start', index: 0, blockType: 'text' },
  { type: 'text-delta', index: 0, text },
  { type: 'block-end', index: 0, block: { type: 'text', text } },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 1 } },
  { type: 'finish', reason: 'stop' },
]

/** An adapter that plays attempts in order and records every request. */
export class FakeAdapter extends LlmAdapter {
  readonly requests: AdapterRequest[] = []
  constructor(private readonly attempts: FakeAttempt[], private readonly models: ModelInfo[] = []) {
    super()
  }

  async *stream(request: AdapterRequest): AsyncIterable<StreamChunk> {
    this.requests.push(request)
    const attempt = this.attempts.shift()
    if (!attempt) throw new Error('the fake adapter ran out of scripted attempts')
    for (const chunk of attempt.chunks ?? []) {
      // Tests hand it malformed chunks too (null among them).
      if ((chunk as Partial<StreamChunk> | null)?.type === 'finish' && attempt.gate) await attempt.gate
      yield chunk
    }
    if (attempt.throws) throw new LlmError(attempt.throws)
  }

  override resolveModel(_provider: string, model: string, _signal?: AbortSignal): ModelInfo | undefined | Promise<ModelInfo | undefined> {
    return this.models.find((info) => info.id === model)
  }

  override listModels() {
    return this.models
  }
}
