/**
 * `BlockAssembler` folds a chunk stream into content blocks, keeping what a cut-off stream
 * already showed and dropping what would be unsafe to act on.
 */

import type { LlmFailure } from './errors.ts'
import type { ContentBlock } from './message.ts'
import { carriesAnswer, EMPTY_RESPONSE, isEmptyFinish, type FinishReason, type StreamChunk } from './stream.ts'
import type { TokenUsage } from './usage.ts'
import type { JsonValue } from '@rein/base'

interface OpenBlock {
  type: 'text' | 'reasoning' | 'tool-call'
  text: string
  id?: string
  name?: string
  ended?: ContentBlock
}

/** How the stream ended, as `BlockAssembler.finish` holds it: the finish chunk's reason, failure and replay state. */
export interface AssembledFinish {
  reason: FinishReason
  failure?: LlmFailure
  replayState?: JsonValue
}

/** Folds one stream's chunks into content blocks: `blocks()` for a finished answer, `interruptedBlocks()` for what a cut-off one showed. */
export class BlockAssembler {
  private readonly _blocks = new Map<number, OpenBlock>()
  private _usage: TokenUsage | undefined
  private _finish: AssembledFinish | undefined
  private _answered = false

  push(chunk: StreamChunk): void {
    if (this._finish) return
    this._answered ||= carriesAnswer(chunk)
    switch (chunk.type) {
      case 'discard':
        // What an attempt that failed showed: the next attempt's blocks start again at index 0.
        this._blocks.clear()
        this._usage = undefined
        this._answered = false
        return
      case 'block-start':
        if (!this._blocks.has(chunk.index)) this._blocks.set(chunk.index, { type: chunk.blockType, text: '' })
        return
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.open(chunk.index, chunk.type === 'text-delta' ? 'text' : 'reasoning')
        if (block && !block.ended) block.text += chunk.text
        return
      }
      case 'tool-call-delta': {
        const block = this.open(chunk.index, 'tool-call')
        if (!block || block.ended) return
        block.id ??= chunk.id
        if (chunk.name !== undefined) block.name = chunk.name
        block.text += chunk.argumentsDelta
        return
      }
      case 'block-end': {
        const block = this._blocks.get(chunk.index) ?? { type: kindOf(chunk.block), text: '' }
        block.ended ??= chunk.block
        this._blocks.set(chunk.index, block)
        return
      }
      case 'usage':
        // A report is the usage so far: the last one counts, never their sum.
        this._usage = chunk.usage
        return
      case 'finish':
        this._finish = {
          reason: chunk.reason,
          ...(chunk.failure ? { failure: chunk.failure } : {}),
          ...(chunk.replayState !== undefined ? { replayState: chunk.replayState } : {}),
        }
    }
  }

  /**
   * The finished blocks in index order. After a `max-tokens` finish every tool call is dropped:
   * a call cut off by the token limit may be missing arguments, and running it would be unsafe.
   */
  blocks(): ContentBlock[] {
    const dropCalls = this._finish?.reason === 'max-tokens'
    return this.ordered()
      .map((block) => block.ended ?? build(block))
      .filter((block) => !(dropCalls && block.type === 'tool-call'))
  }

  /** What a cut-off stream had already shown: text and reasoning only, including unfinished blocks. */
  interruptedBlocks(): ContentBlock[] {
    return this.ordered()
      .filter((block) => block.type !== 'tool-call')
      .map((block) => block.ended ?? build(block))
      .filter((block) => 'text' in block && block.text.length > 0)
  }

  get usage(): TokenUsage | undefined {
    return this._usage
  }

  /**
   * The finish as received, except that a `stop` or `tool-calls` with nothing to act on becomes an
   * `EMPTY_RESPONSE` error. Before any finish arrived: undefined.
   */
  get finish(): AssembledFinish | undefined {
    const finish = this._finish
    if (finish && isEmptyFinish(finish.reason, this._answered)) return { reason: 'error', failure: { ...EMPTY_RESPONSE } }
    return finish
  }

  private open(index: number, type: OpenBlock['type']): OpenBlock | undefined {
    let block = this._blocks.get(index)
    if (!block) {
      block = { type, text: '' }
      this._blocks.set(index, block)
    }
    return block.type === type ? block : undefined
  }

  private ordered(): OpenBlock[] {
    return [...this._blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block)
  }
}

function build(block: OpenBlock): ContentBlock {
  if (block.type === 'tool-call') return { type: 'tool-call', id: block.id ?? '', name: block.name ?? '', arguments: block.text }
  return { type: block.type, text: block.text }
}

function kindOf(block: ContentBlock): OpenBlock['type'] {
  return block.type === 'reasoning' || block.type === 'tool-call' ? block.type : 'text'
}
