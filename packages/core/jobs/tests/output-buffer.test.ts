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
})
