import { describe, expect, it } from 'vitest'
import { OutputBuffer } from '../src/output-buffer.ts'

describe('OutputBuffer', () => {
  it('keeps the newest unread characters within its limit and counts what it dropped', () => {
    const buffer = new OutputBuffer(10)
    buffer.push('abcdef')
    buffer.push('ghijkl')
    buffer.push('')
    expect([buffer.unreadChars, buffer.droppedChars]).toEqual([10, 2])
    expect(buffer.take()).toEqual({ output: 'cdefghijkl', droppedChars: 2 })
    expect(buffer.take()).toEqual({ output: '', droppedChars: 0 })
  })

  it('drops whole chunks bigger than the limit', () => {
    const buffer = new OutputBuffer(4)
    buffer.push('x'.repeat(100))
    buffer.push('tail')
    expect(buffer.take()).toEqual({ output: 'tail', droppedChars: 100 })
  })

  it('never keeps half of a surrogate pair', () => {
    // Keeping the last 2 code units would start inside the emoji: the whole pair goes instead.
    const buffer = new OutputBuffer(2)
    buffer.push('a😀b')
    const { output, droppedChars } = buffer.take()
    expect(output).toBe('b')
    expect(droppedChars).toBe(3)
  })

  it('keeps at most its line limit as well, dropping whole lines from the head', () => {
    const buffer = new OutputBuffer(1_000, 3)
    buffer.push('one\ntwo\n')
    buffer.push('three\nfour\nfi')
    buffer.push('ve')
    expect(buffer.unreadChars).toBe('three\nfour\nfive'.length)
    expect(buffer.take()).toEqual({ output: 'three\nfour\nfive', droppedChars: 8 })
  })

  it('counts a final newline as the end of a line, not the start of another, as the agent\'s spill does', () => {
    const buffer = new OutputBuffer(1_000, 2)
    buffer.push('a\nb\nc\n')
    expect(buffer.take()).toEqual({ output: 'b\nc\n', droppedChars: 2 })
  })

  it('drops lines spread over many chunks, and keeps counting what the character limit drops too', () => {
    const buffer = new OutputBuffer(10, 4)
    for (let i = 0; i < 100; i++) buffer.push('y\n')
    expect(buffer.take()).toEqual({ output: 'y\ny\ny\ny\n', droppedChars: 192 })
    buffer.push('x'.repeat(30))
    buffer.push('\nz')
    expect(buffer.take()).toEqual({ output: 'xxxxxxxx\nz', droppedChars: 22 })
  })
})
