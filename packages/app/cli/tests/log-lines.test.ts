// What rein prints of a plugin's log line without --verbose: a leading error loses its stack frames, nothing else changes.
import { Logger } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { withoutFrames } from '../src/session-command.ts'

const line = (...args: unknown[]) => Logger.format({ export: () => {} }, withoutFrames({ type: 'error', name: 'x', level: 0, ts: 0, args, content: '' } as never))

describe('withoutFrames', () => {
  it("drops a leading error's stack frames and keeps what follows it", () => {
    const error = new Error('the package is missing')
    expect(line(error, 'extra')).toBe('Error: the package is missing extra')
    expect(error.stack).toMatch(/\n {4}at /)
  })

  it('leaves a message that is text alone, indented lines included', () => {
    expect(line('two problems:\n  at least one provider is needed\n    at row 2')).toBe('two problems:\n  at least one provider is needed\n    at row 2')
    expect(line('failed: %s', new Error('no'))).toBe('failed: Error: no')
  })
})
