import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BlockAssembler, type StreamChunk } from '../src/index.ts'

function assemble(chunks: StreamChunk[]) {
  const assembler = new BlockAssembler()
  for (const chunk of chunks) assembler.push(chunk)
  return assembler
}

const usage = { inputTokens: 10, outputTokens: 5 }

describe('BlockAssembler', () => {
  it('assembles text, reasoning and tool calls in index order', () => {
    const assembler = assemble([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'Look it ' },
      { type: 'reasoning-delta', index: 0, text: 'up.' },
      { type: 'tool-call-delta', index: 2, id: 'call_2', name: 'b', argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 1, id: 'call_1', name: 'read_file', argumentsDelta: '{"path":' },
      { type: 'tool-call-delta', index: 1, id: 'call_1', argumentsDelta: '"a.md"}' },
      { type: 'usage', usage },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(assembler.blocks()).toEqual([
      { type: 'reasoning', text: 'Look it up.' },
      { type: 'tool-call', id: 'call_1', name: 'read_file', arguments: '{"path":"a.md"}' },
      { type: 'tool-call', id: 'call_2', name: 'b', arguments: '{}' },
    ])
    expect(assembler.usage).toEqual(usage)
    expect(assembler.finish).toEqual({ reason: 'tool-calls' })
  })

  it('keeps tool arguments as the raw text, even when it is not valid JSON', () => {
    const assembler = assemble([
      { type: 'tool-call-delta', index: 0, id: 'c', name: 'x', argumentsDelta: '{"a": 1,,' },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(assembler.blocks()).toEqual([{ type: 'tool-call', id: 'c', name: 'x', arguments: '{"a": 1,,' }])
  })

  it('takes the block from block-end and ignores deltas after it', () => {
    const assembler = assemble([
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'block-end', index: 0, block: { type: 'text', text: 'Hello' } },
      { type: 'text-delta', index: 0, text: ' late' },
      { type: 'finish', reason: 'stop' },
    ])
    expect(assembler.blocks()).toEqual([{ type: 'text', text: 'Hello' }])
  })

  it('drops every tool call after a max-tokens finish: a truncated call is unsafe', () => {
    const assembler = assemble([
      { type: 'text-delta', index: 0, text: 'I will write the file.' },
      { type: 'tool-call-delta', index: 1, id: 'c', name: 'write', argumentsDelta: '{"path":"a","content":"trunc' },
      { type: 'finish', reason: 'max-tokens' },
    ])
    expect(assembler.blocks()).toEqual([{ type: 'text', text: 'I will write the file.' }])
    expect(assembler.finish).toEqual({ reason: 'max-tokens' })
  })

  it('gives the shown text and reasoning of a stream cut short, without tool calls', () => {
    const assembler = assemble([
      { type: 'reasoning-delta', index: 0, text: 'Thinking' },
      { type: 'text-delta', index: 1, text: 'Partial ans' },
      { type: 'tool-call-delta', index: 2, id: 'c', name: 'x', argumentsDelta: '{' },
    ])
    expect(assembler.finish).toBeUndefined()
    expect(assembler.interruptedBlocks()).toEqual([
      { type: 'reasoning', text: 'Thinking' },
      { type: 'text', text: 'Partial ans' },
    ])
  })

  it('turns an empty stop into an EMPTY_RESPONSE error, even with reasoning only', () => {
    expect(assemble([{ type: 'finish', reason: 'stop' }]).finish).toEqual({
      reason: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'the model returned an empty response' },
    })
    expect(assemble([{ type: 'text-delta', index: 0, text: '  ' }, { type: 'finish', reason: 'stop' }]).finish?.reason).toBe('error')
    expect(assemble([{ type: 'reasoning-delta', index: 0, text: 'hmm' }, { type: 'finish', reason: 'stop' }]).finish?.reason).toBe('error')
    expect(assemble([{ type: 'text-delta', index: 0, text: 'ok' }, { type: 'finish', reason: 'stop' }]).finish).toEqual({ reason: 'stop' })
  })

  it('turns a tool-calls finish with no call and no text into an EMPTY_RESPONSE error (a server whose call parser failed)', () => {
    expect(assemble([{ type: 'finish', reason: 'tool-calls' }]).finish).toEqual({
      reason: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'the model returned an empty response' },
    })
    expect(assemble([{ type: 'reasoning-delta', index: 0, text: 'call it' }, { type: 'finish', reason: 'tool-calls' }]).finish?.reason).toBe('error')
    expect(assemble([{ type: 'tool-call-delta', index: 0, id: 'c1', name: 'f', argumentsDelta: '{}' }, { type: 'finish', reason: 'tool-calls' }]).finish).toEqual({ reason: 'tool-calls' })
  })

  it('drops what it was shown on a discard: the next attempt starts again at index 0, with its own usage', () => {
    const assembler = assemble([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'First try' },
      { type: 'usage', usage: { inputTokens: 50, outputTokens: 30 } },
      { type: 'discard' },
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Four.' },
      { type: 'finish', reason: 'stop' },
    ])
    expect(assembler.blocks()).toEqual([{ type: 'text', text: 'Four.' }])
    expect(assembler.usage).toBeUndefined()
    expect(assembler.finish).toEqual({ reason: 'stop' })
    // An answer after a discard must carry something of its own: the dropped one's does not count.
    expect(assemble([{ type: 'text-delta', index: 0, text: 'ok' }, { type: 'discard' }, { type: 'finish', reason: 'stop' }]).finish?.reason).toBe('error')
  })

  it('ignores everything after finish', () => {
    const assembler = assemble([
      { type: 'text-delta', index: 0, text: 'a' },
      { type: 'finish', reason: 'stop' },
      { type: 'text-delta', index: 0, text: 'b' },
      { type: 'usage', usage },
      { type: 'finish', reason: 'error' },
    ])
    expect(assembler.blocks()).toEqual([{ type: 'text', text: 'a' }])
    expect(assembler.usage).toBeUndefined()
    expect(assembler.finish).toEqual({ reason: 'stop' })
  })

  it('assembles the same blocks however the deltas are split and interleaved', () => {
    const block = fc.oneof(
      fc.record({ type: fc.constant('text' as const), text: fc.string({ minLength: 1 }) }),
      fc.record({ type: fc.constant('reasoning' as const), text: fc.string({ minLength: 1 }) }),
      fc.record({ type: fc.constant('tool-call' as const), id: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), arguments: fc.string() }),
    )
    fc.assert(fc.property(fc.array(block, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 40 }), fc.integer(), (blocks, cuts, seed) => {
      // Split every block's text at arbitrary points, then interleave the pieces of different blocks
      // while keeping each block's own pieces in order — what a provider may legitimately do.
      const queues = blocks.map((block, index) => {
        const text = block.type === 'tool-call' ? block.arguments : block.text
        const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
        const pieces = [0, ...points, text.length].slice(1).map((end, i, all) => text.slice(i === 0 ? 0 : all[i - 1], end))
        return pieces.map((piece, i): StreamChunk => block.type === 'tool-call'
          ? { type: 'tool-call-delta', index, id: block.id, ...(i === 0 ? { name: block.name } : {}), argumentsDelta: piece }
          : { type: block.type === 'text' ? 'text-delta' : 'reasoning-delta', index, text: piece })
      })
      const chunks: StreamChunk[] = []
      let state = seed
      while (queues.some((queue) => queue.length > 0)) {
        state = (state * 1103515245 + 12345) % 2147483648
        const open = queues.filter((queue) => queue.length > 0)
        chunks.push(open[Math.abs(state) % open.length]!.shift()!)
      }
      chunks.push({ type: 'finish', reason: 'stop' })
      expect(assemble(chunks).blocks()).toEqual(blocks)
    }))
  })
})
